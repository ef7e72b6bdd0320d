/**
 * Workspace refs of react.pull / react.checkout / react.rg and the ANNOUNCE workspace state.
 * Physical keys of the `file` artifacts: `<turn>/files/<rel>`, `<turn>/outputs/<rel>`,
 * `<turn>/attachments/<name>`; a pulled ref of turn T is `T/pulled/<historical key>` (read-only,
 * beside the workspace); a checked-out file is an ordinary `T/files/<rel>` whose payload names
 * where it came from. Pure.
 */
import { parsePath, physicalPath, TURN_ID_RE } from '../timeline/paths';

export interface HistoricalRef {
  /** The ref as given. */
  raw: string;
  /** Canonical logical form (`fi:<turn>.files/<rel>`; `fi:<turn>.files` for a whole tree). */
  logical: string;
  turnId: string;
  area: 'files' | 'outputs' | 'attachments';
  /** Physical key, or key prefix (ends with `/`) for a subtree. */
  key: string;
  /** True when `key` may name a directory (files/ refs): matches `key` and everything under `key/`. */
  subtree: boolean;
}

const WHOLE_TREE = /^(?:conv:)?fi:([^.]+)\.files\/?$/;

/**
 * Parses a historical `fi:` ref. `files/` refs may name a subtree; outputs and attachments must
 * be exact files (`allowed` narrows the areas, e.g. checkout takes files/ only).
 */
export function parseHistoricalRef(
  raw: string,
  currentTurn: string,
  allowed: ReadonlyArray<HistoricalRef['area']>,
): HistoricalRef {
  const trimmed = raw.trim();
  const whole = WHOLE_TREE.exec(trimmed);
  let ref: HistoricalRef;
  if (whole) {
    if (!TURN_ID_RE.test(whole[1]!)) throw new Error(`invalid turn id in "${raw}"`);
    const turnId = whole[1]!;
    ref = { raw, logical: `fi:${turnId}.files`, turnId, area: 'files', key: `${turnId}/files/`, subtree: true };
  } else {
    const p = parsePath(trimmed);
    if (p.kind !== 'fi.files' && p.kind !== 'fi.outputs' && p.kind !== 'fi.user.attachment') {
      throw new Error(
        `"${raw}" is not a workspace ref: expected fi:<turn>.files/<path>, fi:<turn>.outputs/<file> or fi:<turn>.user.attachments/<name>`,
      );
    }
    const area = p.kind === 'fi.files' ? 'files' : p.kind === 'fi.outputs' ? 'outputs' : 'attachments';
    const key = physicalPath(p)!.replace(/\/+$/, '');
    const logical = trimmed.replace(/^conv:/, '').replace(/\/+$/, '');
    ref = { raw, logical, turnId: p.turnId, area, key, subtree: area === 'files' };
  }
  if (!allowed.includes(ref.area)) {
    throw new Error(
      `"${raw}": only ${allowed.map((a) => `fi:<turn>.${a === 'attachments' ? 'user.attachments' : a}/…`).join(', ')} refs are accepted here`,
    );
  }
  if (ref.turnId === currentTurn) {
    throw new Error(`"${raw}" is the current turn's own workspace; name an earlier turn`);
  }
  return ref;
}

/** Whether a stored key is covered by the ref (exact file, or under a subtree). */
export function refCovers(ref: HistoricalRef, key: string): boolean {
  if (ref.key.endsWith('/')) return key.startsWith(ref.key);
  return key === ref.key || (ref.subtree && key.startsWith(`${ref.key}/`));
}

/** The key of a pulled copy in the current turn. */
export function pulledKey(currentTurn: string, historicalKey: string): string {
  return `${currentTurn}/pulled/${historicalKey}`;
}

/** The historical key behind a pulled key (undefined when `key` is not a pulled key of `turn`). */
export function historicalKeyOfPulled(currentTurn: string, key: string): string | undefined {
  const prefix = `${currentTurn}/pulled/`;
  return key.startsWith(prefix) ? key.slice(prefix.length) : undefined;
}

/** Logical path of a physical workspace key (`t/files/a` → `fi:t.files/a`; attachments → `.user.attachments/`). */
export function logicalOfKey(key: string): string {
  const m = /^([^/]+)\/(files|outputs|attachments)\/(.+)$/s.exec(key);
  if (!m) throw new Error(`not a workspace key: ${key}`);
  return `fi:${m[1]}.${m[2] === 'attachments' ? 'user.attachments' : m[2]}/${m[3]}`;
}

/** Where a checked-out historical file lands in the current turn (`files/<rel>` keeps its rel). */
export function checkoutKey(currentTurn: string, historicalKey: string): string {
  const m = /^[^/]+\/files\/(.+)$/s.exec(historicalKey);
  if (!m) throw new Error(`only files/ refs can be checked out (got ${historicalKey})`);
  return `${currentTurn}/files/${m[1]}`;
}

export interface WorkspaceEntry {
  key: string;
  sizeBytes: number;
  /** Logical ref the file was checked out from (payload.checked_out_from), if any. */
  checkedOutFrom?: string;
}

/**
 * ANNOUNCE's [WORKSPACE] lines: the current turn's files by scope (the first folder under
 * files/), which turn each came from, its outputs, and the read-only pulled refs.
 */
export function workspaceStateLines(currentTurn: string, entries: readonly WorkspaceEntry[]): string[] {
  const own = `${currentTurn}/`;
  const files = entries.filter((e) => e.key.startsWith(`${own}files/`));
  const outputs = entries.filter((e) => e.key.startsWith(`${own}outputs/`));
  const attachments = entries.filter((e) => e.key.startsWith(`${own}attachments/`));
  const pulled = entries.filter((e) => e.key.startsWith(`${own}pulled/`));
  const lines: string[] = [];
  if (files.length === 0) {
    lines.push(
      'current workspace (files/): empty — react.write creates files; react.checkout(mode="replace", paths=["fi:<turn>.files/<scope>"]) continues an earlier turn\'s',
    );
  } else {
    const scopes = new Map<string, WorkspaceEntry[]>();
    for (const f of files) {
      const rel = f.key.slice(`${own}files/`.length);
      const scope = rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : '(root)';
      scopes.set(scope, [...(scopes.get(scope) ?? []), f]);
    }
    lines.push(`current workspace (files/): ${files.length} file(s) in ${scopes.size} scope(s)`);
    for (const [scope, list] of scopes) {
      const origins = [...new Set(list.map((f) => originTurn(f) ?? currentTurn))];
      lines.push(
        `scope ${scope}: ${list.map((f) => `${logicalOfKey(f.key)} (${f.sizeBytes} B${f.checkedOutFrom ? `, from ${f.checkedOutFrom}` : ', written this turn'})`).join('; ')}` +
          ` [turns: ${origins.join(', ')}]`,
      );
    }
  }
  if (outputs.length > 0)
    lines.push(`outputs/: ${outputs.map((f) => `${logicalOfKey(f.key)} (${f.sizeBytes} B)`).join('; ')}`);
  if (attachments.length > 0)
    lines.push(`attachments: ${attachments.map((f) => `${logicalOfKey(f.key)} (${f.sizeBytes} B)`).join('; ')}`);
  if (pulled.length > 0) {
    const refs = pulled.map((f) => logicalOfKey(historicalKeyOfPulled(currentTurn, f.key)!));
    lines.push(`pulled read-only (beside the workspace, not editable): ${refs.join('; ')}`);
  }
  return lines;
}

function originTurn(e: WorkspaceEntry): string | undefined {
  return e.checkedOutFrom ? /^fi:([^.]+)\./.exec(e.checkedOutFrom)?.[1] : undefined;
}
