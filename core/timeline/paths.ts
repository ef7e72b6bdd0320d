/**
 * Logical paths: one grammar for `fi:`, `ar:`, `tc:`, `so:`, `su:`, `ws:`, `sk:`, `ks:`.
 *
 * Pure and deterministic. `parsePath` turns a string into a typed `LogicalPath` (throwing a
 * readable error on bad input, traversal included); `formatPath` is its inverse and yields the
 * canonical bare form (`fi:…`, never `conv:fi:…`). Resolution against blocks lives in
 * `path-resolve.ts`.
 */

import {
  assertSafeRelPath,
  EVENT_KIND_RE,
  formatSidSelector,
  MAX_PATH_CHARS,
  MESSAGE_ID_RE,
  need,
  OWNER_ID_RE,
  OWNER_PREFIX,
  parseSidSelector,
  PLAN_ID_RE,
  posInt,
  SYSTEM_NAME_RE,
  TOKEN_RE,
  TURN_ID_RE,
  type LogicalPath,
} from './path-grammar';

export {
  assertSafeRelPath,
  formatSidSelector,
  parseSidSelector,
  TOKEN_RE,
  TURN_ID_RE,
  type LogicalPath,
  type PathKind,
  type PathNamespace,
} from './path-grammar';

/** Splits `conv_<id>.<rest>` into owner and rest; undefined when `body` has no owner segment. */
function splitOwner(body: string): { owner: string; rest: string } | undefined {
  if (!body.startsWith(OWNER_PREFIX)) return undefined;
  const dot = body.indexOf('.');
  if (dot <= OWNER_PREFIX.length || dot === body.length - 1) return undefined;
  return { owner: body.slice(OWNER_PREFIX.length, dot), rest: body.slice(dot + 1) };
}

/**
 * Removes the owner segment `conv_<id>.` from a ref only when it names `conversationId`
 * (the reference's `localize_conversation_ref`); any other ref is returned unchanged.
 */
export function localizePath(input: string, conversationId: string): string {
  const m = /^((?:conv:)?[a-z]{2}:)(.*)$/s.exec(input.trim());
  if (!m) return input;
  const split = splitOwner(m[2]!);
  return split && split.owner === conversationId ? `${m[1]}${split.rest}` : input;
}

/** Parses a logical path. Accepts the bare form and, leniently, a `conv:` prefix (stripped). */
export function parsePath(input: string): LogicalPath {
  if (typeof input !== 'string') throw new Error('path must be a string');
  const raw = input.trim();
  if (raw.length === 0) throw new Error('empty path');
  if (raw.length > MAX_PATH_CHARS) throw new Error(`path longer than ${MAX_PATH_CHARS} characters`);
  if (raw.includes('\0')) throw new Error('path contains a NUL byte');
  if (raw.includes('\\')) throw new Error(`path contains a backslash: "${raw}"`);
  let s = raw.startsWith('conv:') ? raw.slice(5) : raw;
  if (s.startsWith('sources_pool') || /^conv_[^.]*\.sources_pool/.test(s)) s = `so:${s}`;
  const m = /^([a-z]{2}):(.*)$/s.exec(s);
  if (!m) throw new Error(`path "${raw}" has no namespace (expected fi:, ar:, tc:, so:, su:, ws:, sk: or ks:)`);
  const ns = m[1]!;
  const body = m[2]!;
  if (ns !== 'so' && splitOwner(body)) {
    throw new Error(
      `path "${raw}" names another conversation (conv_<id>. owner segments are readable only for the current conversation)`,
    );
  }
  switch (ns) {
    case 'fi':
      return parseFi(body, raw);
    case 'ar':
      return parseAr(body, raw);
    case 'tc': {
      const t = /^([^.]+)\.([^.]+)\.(call|result)$/.exec(body);
      if (!t) throw new Error(`invalid tc: path "${raw}" (expected tc:<turn>.<call_id>.call|result)`);
      return {
        ns: 'tc',
        kind: t[3] === 'call' ? 'tc.call' : 'tc.result',
        turnId: need(TURN_ID_RE, t[1], 'turn id', raw),
        callId: need(TOKEN_RE, t[2], 'call id', raw),
      };
    }
    case 'so': {
      const split = splitOwner(body);
      const owner = split ? need(OWNER_ID_RE, split.owner, 'conversation id', raw) : undefined;
      const rest = split ? split.rest : body;
      const own = owner === undefined ? {} : { conversationId: owner };
      if (rest === 'sources_pool') return { ns: 'so', kind: 'so.pool', sids: null, ...own };
      const sel = /^sources_pool\[(.*)\]$/s.exec(rest);
      if (!sel)
        throw new Error(
          `invalid so: path "${raw}" (expected so:sources_pool[1,3-5] or so:conv_<id>.sources_pool[1,3-5])`,
        );
      return { ns: 'so', kind: 'so.pool', sids: parseSidSelector(sel[1]!, raw), ...own };
    }
    case 'su': {
      const t = /^([^.]+)\.conv\.range\.summary$/.exec(body);
      if (!t) throw new Error(`invalid su: path "${raw}" (expected su:<turn>.conv.range.summary)`);
      return { ns: 'su', kind: 'su.range.summary', turnId: need(TURN_ID_RE, t[1], 'turn id', raw) };
    }
    case 'ws': {
      const t = /^([^.]+)\.conv\.working\.summary(?:\.attempt\.([0-9]+))?$/.exec(body);
      if (!t) throw new Error(`invalid ws: path "${raw}" (expected ws:<turn>.conv.working.summary[.attempt.<n>])`);
      const p: LogicalPath = { ns: 'ws', kind: 'ws.working.summary', turnId: need(TURN_ID_RE, t[1], 'turn id', raw) };
      if (t[2] !== undefined) p.attempt = posInt(t[2], 'attempt', raw, 1);
      return p;
    }
    case 'sk':
      if (!/^[A-Za-z0-9_.:/-]+$/.test(body)) throw new Error(`invalid skill name in path "${raw}"`);
      assertSafeRelPath(body, `path "${raw}"`);
      return { ns: 'sk', kind: 'sk.skill', name: body };
    case 'ks':
      return { ns: 'ks', kind: 'ks.knowledge', rel: assertSafeRelPath(body, `path "${raw}"`) };
    default:
      throw new Error(`unknown namespace "${ns}:" in path "${raw}"`);
  }
}

function parseFi(body: string, raw: string): LogicalPath {
  const dot = body.indexOf('.');
  if (dot <= 0) throw new Error(`invalid fi: path "${raw}" (expected fi:<turn>.files/<rel>)`);
  const turnId = need(TURN_ID_RE, body.slice(0, dot), 'turn id', raw);
  const rest = body.slice(dot + 1);
  const safe = (rel: string) => assertSafeRelPath(rel, `path "${raw}"`);
  let t: RegExpExecArray | null;
  if ((t = /^(files|outputs)\/(.+)$/s.exec(rest))) {
    return { ns: 'fi', kind: t[1] === 'files' ? 'fi.files' : 'fi.outputs', turnId, rel: safe(t[2]!) };
  }
  if ((t = /^git\/(projects|snapshots)\/(.+)$/s.exec(rest))) {
    return { ns: 'fi', kind: 'fi.git', turnId, area: t[1] as 'projects' | 'snapshots', rel: safe(t[2]!) };
  }
  if ((t = /^user\.attachments\/(.+)$/s.exec(rest))) {
    const name = safe(t[1]!);
    if (name.includes('/')) throw new Error(`attachment name must not contain "/" in path "${raw}"`);
    return { ns: 'fi', kind: 'fi.user.attachment', turnId, name };
  }
  if ((t = /^external\.([^./]+)\.attachments\/([^/]+)\/(.+)$/s.exec(rest))) {
    safe(`${t[2]}/${t[3]}`);
    const name = t[3]!;
    if (name.includes('/')) throw new Error(`attachment name must not contain "/" in path "${raw}"`);
    return {
      ns: 'fi',
      kind: 'fi.external.attachment',
      turnId,
      eventKind: need(EVENT_KIND_RE, t[1], 'event kind', raw),
      messageId: need(MESSAGE_ID_RE, safe(t[2]!), 'message id', raw),
      name,
    };
  }
  if ((t = /^code\.([^./]+)$/.exec(rest))) {
    return { ns: 'fi', kind: 'fi.code', turnId, callId: need(TOKEN_RE, t[1], 'call id', raw) };
  }
  throw new Error(
    `invalid fi: path "${raw}" (expected fi:<turn>.files/<rel>, .outputs/<rel>, .user.attachments/<name>, ` +
      `.external.<kind>.attachments/<message_id>/<name>, .git/projects/<rel> or .code.<call_id>)`,
  );
}

function parseAr(body: string, raw: string): LogicalPath {
  if (body.startsWith('plan.latest:')) {
    return {
      ns: 'ar',
      kind: 'ar.plan.latest',
      planId: need(PLAN_ID_RE, body.slice('plan.latest:'.length), 'plan id', raw),
    };
  }
  const dot = body.indexOf('.');
  if (dot <= 0) throw new Error(`invalid ar: path "${raw}" (expected ar:<turn>.<artifact>)`);
  const turnId = need(TURN_ID_RE, body.slice(0, dot), 'turn id', raw);
  const rest = body.slice(dot + 1);
  let t: RegExpExecArray | null;
  if (rest === 'user.prompt') return { ns: 'ar', kind: 'ar.user.prompt', turnId };
  if (rest === 'react.turn.index') return { ns: 'ar', kind: 'ar.turn.index', turnId };
  if ((t = /^assistant\.completion(?:\.([0-9]+))?$/.exec(rest))) {
    const p: LogicalPath = { ns: 'ar', kind: 'ar.completion', turnId };
    if (t[1] !== undefined) p.n = posInt(t[1], 'completion number', raw, 1);
    return p;
  }
  if ((t = /^external\.([^.]+)\.([^.]+)$/.exec(rest))) {
    return {
      ns: 'ar',
      kind: 'ar.external',
      turnId,
      eventKind: need(EVENT_KIND_RE, t[1], 'event kind', raw),
      messageId: need(MESSAGE_ID_RE, t[2], 'message id', raw),
    };
  }
  if ((t = /^react\.(notes|round\.start)\.([^.]+)$/.exec(rest))) {
    return {
      ns: 'ar',
      kind: t[1] === 'notes' ? 'ar.notes' : 'ar.round.start',
      turnId,
      callId: need(TOKEN_RE, t[2], 'call id', raw),
    };
  }
  if ((t = /^react\.plan\.ack\.([0-9]+)$/.exec(rest))) {
    return { ns: 'ar', kind: 'ar.plan.ack', turnId, iter: posInt(t[1]!, 'iteration', raw) };
  }
  if ((t = /^react\.plan\.([^.]+)(\.carry)?$/.exec(rest))) {
    const p: LogicalPath = { ns: 'ar', kind: 'ar.plan', turnId, planId: need(PLAN_ID_RE, t[1], 'plan id', raw) };
    if (t[2]) p.carry = true;
    return p;
  }
  if ((t = /^react\.decision\.raw\.(interrupted\.)?([0-9]+)$/.exec(rest))) {
    const p: LogicalPath = { ns: 'ar', kind: 'ar.decision.raw', turnId, iter: posInt(t[2]!, 'iteration', raw) };
    if (t[1]) p.interrupted = true;
    return p;
  }
  if ((t = /^system\.message\.([^.]+)$/.exec(rest))) {
    return {
      ns: 'ar',
      kind: 'ar.system.message',
      turnId,
      name: need(SYSTEM_NAME_RE, t[1], 'system message name', raw),
    };
  }
  throw new Error(`unknown ar: path "${raw}"`);
}

/** Canonical bare string of a logical path. Validates its parts (throws on bad input). */
export function formatPath(p: LogicalPath): string {
  const s = formatUnchecked(p);
  const back = parsePath(s);
  if (formatUnchecked(back) !== s) throw new Error(`path parts do not round-trip: "${s}"`);
  return s;
}

function formatUnchecked(p: LogicalPath): string {
  switch (p.kind) {
    case 'fi.files':
      return `fi:${p.turnId}.files/${p.rel}`;
    case 'fi.outputs':
      return `fi:${p.turnId}.outputs/${p.rel}`;
    case 'fi.git':
      return `fi:${p.turnId}.git/${p.area}/${p.rel}`;
    case 'fi.user.attachment':
      return `fi:${p.turnId}.user.attachments/${p.name}`;
    case 'fi.external.attachment':
      return `fi:${p.turnId}.external.${p.eventKind}.attachments/${p.messageId}/${p.name}`;
    case 'fi.code':
      return `fi:${p.turnId}.code.${p.callId}`;
    case 'tc.call':
      return `tc:${p.turnId}.${p.callId}.call`;
    case 'tc.result':
      return `tc:${p.turnId}.${p.callId}.result`;
    case 'ar.user.prompt':
      return `ar:${p.turnId}.user.prompt`;
    case 'ar.external':
      return `ar:${p.turnId}.external.${p.eventKind}.${p.messageId}`;
    case 'ar.completion':
      return `ar:${p.turnId}.assistant.completion${p.n !== undefined ? `.${p.n}` : ''}`;
    case 'ar.plan.latest':
      return `ar:plan.latest:${p.planId}`;
    case 'ar.turn.index':
      return `ar:${p.turnId}.react.turn.index`;
    case 'ar.notes':
      return `ar:${p.turnId}.react.notes.${p.callId}`;
    case 'ar.round.start':
      return `ar:${p.turnId}.react.round.start.${p.callId}`;
    case 'ar.plan':
      return `ar:${p.turnId}.react.plan.${p.planId}${p.carry ? '.carry' : ''}`;
    case 'ar.plan.ack':
      return `ar:${p.turnId}.react.plan.ack.${p.iter}`;
    case 'ar.decision.raw':
      return `ar:${p.turnId}.react.decision.raw.${p.interrupted ? 'interrupted.' : ''}${p.iter}`;
    case 'ar.system.message':
      return `ar:${p.turnId}.system.message.${p.name}`;
    case 'so.pool': {
      const owner = p.conversationId === undefined ? '' : `${OWNER_PREFIX}${p.conversationId}.`;
      return p.sids === null ? `so:${owner}sources_pool` : `so:${owner}sources_pool[${formatSidSelector(p.sids)}]`;
    }
    case 'su.range.summary':
      return `su:${p.turnId}.conv.range.summary`;
    case 'ws.working.summary':
      return `ws:${p.turnId}.conv.working.summary${p.attempt !== undefined ? `.attempt.${p.attempt}` : ''}`;
    case 'sk.skill':
      return `sk:${p.name}`;
    case 'ks.knowledge':
      return `ks:${p.rel}`;
  }
}

/** Builders for every path kind; each returns the canonical string and validates its parts. */
export const paths = {
  files: (turnId: string, rel: string) => formatPath({ ns: 'fi', kind: 'fi.files', turnId, rel }),
  outputs: (turnId: string, rel: string) => formatPath({ ns: 'fi', kind: 'fi.outputs', turnId, rel }),
  git: (turnId: string, area: 'projects' | 'snapshots', rel: string) =>
    formatPath({ ns: 'fi', kind: 'fi.git', turnId, area, rel }),
  userAttachment: (turnId: string, name: string) => formatPath({ ns: 'fi', kind: 'fi.user.attachment', turnId, name }),
  externalAttachment: (turnId: string, eventKind: string, messageId: string, name: string) =>
    formatPath({ ns: 'fi', kind: 'fi.external.attachment', turnId, eventKind, messageId, name }),
  toolCode: (turnId: string, callId: string) => formatPath({ ns: 'fi', kind: 'fi.code', turnId, callId }),
  toolCall: (turnId: string, callId: string) => formatPath({ ns: 'tc', kind: 'tc.call', turnId, callId }),
  toolResult: (turnId: string, callId: string) => formatPath({ ns: 'tc', kind: 'tc.result', turnId, callId }),
  userPrompt: (turnId: string) => formatPath({ ns: 'ar', kind: 'ar.user.prompt', turnId }),
  external: (turnId: string, eventKind: string, messageId: string) =>
    formatPath({ ns: 'ar', kind: 'ar.external', turnId, eventKind, messageId }),
  /** `n` omitted: the latest completion of the turn; `n` >= 1: the n-th (1-based). */
  completion: (turnId: string, n?: number) =>
    formatPath(
      n === undefined ? { ns: 'ar', kind: 'ar.completion', turnId } : { ns: 'ar', kind: 'ar.completion', turnId, n },
    ),
  planLatest: (planId: string) => formatPath({ ns: 'ar', kind: 'ar.plan.latest', planId }),
  turnIndex: (turnId: string) => formatPath({ ns: 'ar', kind: 'ar.turn.index', turnId }),
  notes: (turnId: string, callId: string) => formatPath({ ns: 'ar', kind: 'ar.notes', turnId, callId }),
  roundStart: (turnId: string, callId: string) => formatPath({ ns: 'ar', kind: 'ar.round.start', turnId, callId }),
  plan: (turnId: string, planId: string, carry = false) =>
    formatPath(
      carry ? { ns: 'ar', kind: 'ar.plan', turnId, planId, carry } : { ns: 'ar', kind: 'ar.plan', turnId, planId },
    ),
  planAck: (turnId: string, iter: number) => formatPath({ ns: 'ar', kind: 'ar.plan.ack', turnId, iter }),
  decisionRaw: (turnId: string, iter: number, interrupted = false) =>
    formatPath(
      interrupted
        ? { ns: 'ar', kind: 'ar.decision.raw', turnId, iter, interrupted }
        : { ns: 'ar', kind: 'ar.decision.raw', turnId, iter },
    ),
  systemMessage: (turnId: string, name: string) => formatPath({ ns: 'ar', kind: 'ar.system.message', turnId, name }),
  /** `conversationId`: the owner segment, for a selector naming another conversation. */
  sourcesPool: (sids: number[] | null = null, conversationId?: string) =>
    formatPath(
      conversationId === undefined
        ? { ns: 'so', kind: 'so.pool', sids }
        : { ns: 'so', kind: 'so.pool', sids, conversationId },
    ),
  rangeSummary: (turnId: string) => formatPath({ ns: 'su', kind: 'su.range.summary', turnId }),
  workingSummary: (turnId: string, attempt?: number) =>
    formatPath(
      attempt === undefined
        ? { ns: 'ws', kind: 'ws.working.summary', turnId }
        : { ns: 'ws', kind: 'ws.working.summary', turnId, attempt },
    ),
  skill: (name: string) => formatPath({ ns: 'sk', kind: 'sk.skill', name }),
  knowledge: (rel: string) => formatPath({ ns: 'ks', kind: 'ks.knowledge', rel }),
} as const;

/** Re-formats any accepted spelling (e.g. `conv:`-prefixed) to the canonical bare form. */
export function canonicalPath(input: string): string {
  return formatUnchecked(parsePath(input));
}

/** Physical location (relative to the output dir) of workspace-backed `fi:` paths. */
export function physicalPath(p: LogicalPath): string | undefined {
  switch (p.kind) {
    case 'fi.files':
      return `${p.turnId}/files/${p.rel}`;
    case 'fi.outputs':
      return `${p.turnId}/outputs/${p.rel}`;
    case 'fi.git':
      return `${p.turnId}/git/${p.area}/${p.rel}`;
    case 'fi.user.attachment':
      return `${p.turnId}/attachments/${p.name}`;
    case 'fi.external.attachment':
      return `${p.turnId}/external/${p.eventKind}/attachments/${p.messageId}/${p.name}`;
    default:
      return undefined;
  }
}
