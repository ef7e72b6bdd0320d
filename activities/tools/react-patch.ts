/**
 * react.patch: edits an existing current-turn workspace file — a unified diff applied with exact
 * context, or a whole-file replacement — and streams the result like react.write. Idempotent: a
 * retried attempt of the same call finds its own write and reports it again instead of patching
 * the patched file.
 */
import { applyUnifiedDiff, isUnifiedDiff, lineNumberPrefixed } from '../../core/workspace/patch';
import {
  countLines,
  MAX_WRITE_CHARS,
  resolveWriteTarget,
  streamFile,
  WRITE_CHANNELS,
  type WriteChannel,
} from './react-write';
import type { ToolImpl, ToolObservation } from './types';

function refused(text: Record<string, unknown>): ToolObservation {
  return { ok: false, text: JSON.stringify(text), mime: 'application/json' };
}

export const reactPatchImpl: ToolImpl = {
  id: 'react.patch',
  async run(params, ctx) {
    const patch = typeof params.patch === 'string' ? params.patch : '';
    const channel = String(params.channel ?? 'internal') as WriteChannel;
    const kind = params.kind === 'file' ? 'file' : 'display';
    if (!(WRITE_CHANNELS as readonly string[]).includes(channel)) {
      return refused({ status: 'error', error: `channel must be one of ${WRITE_CHANNELS.join(', ')}` });
    }
    let target;
    try {
      target = resolveWriteTarget(ctx.turnId, String(params.path ?? ''));
    } catch (err) {
      return refused({ status: 'error', error: (err as Error).message.replace('react.write', 'react.patch') });
    }
    const existing = await ctx.store.readFile(target.key);
    if (!existing) {
      return refused({
        status: 'error',
        code: 'not_found',
        path: target.logical,
        error: `${target.logical} does not exist in this turn's workspace: react.patch edits existing current-turn files (create it with react.write, or react.checkout it from an earlier turn)`,
      });
    }
    if (existing.content === undefined) {
      return refused({
        status: 'error',
        path: target.logical,
        error: `${target.logical} is binary; react.patch edits text files`,
      });
    }
    const retried = existing.createdBy === ctx.callId;
    let text: string;
    let stats: Record<string, unknown>;
    if (retried) {
      text = existing.content;
      stats = { retried: true };
    } else if (isUnifiedDiff(patch)) {
      const applied = applyUnifiedDiff(existing.content, patch);
      if (!applied.ok) {
        const { ok: _ok, code, message, ...details } = applied;
        return refused({
          status: 'error',
          code,
          path: target.logical,
          error: message,
          ...details,
          ...(details.suggested_read ? { suggested_read: { path: target.logical, ...details.suggested_read } } : {}),
        });
      }
      text = applied.text;
      stats = { mode: 'diff', hunks: applied.hunks, added: applied.added, removed: applied.removed };
    } else {
      const numbered = lineNumberPrefixed(patch.split('\n'));
      if (numbered.length > 0) {
        return refused({
          status: 'error',
          code: 'line_number_prefixes',
          path: target.logical,
          error: `the replacement text carries line-number prefixes (lines ${numbered.slice(0, 5).join(', ')}…) copied from a numbered read; write the file text without them`,
        });
      }
      text = patch;
      stats = { mode: 'replace' };
    }
    if (text.length > MAX_WRITE_CHARS) {
      return refused({
        status: 'error',
        error: `the patched file would have ${text.length} characters; the limit is ${MAX_WRITE_CHARS}`,
      });
    }
    if (!retried) {
      await ctx.store.writeFile({
        key: target.key,
        turnId: ctx.turnId,
        mime: existing.mime ?? target.mime,
        content: text,
        payload: {
          ...(existing.payload as object | undefined),
          channel,
          kind,
          logical_path: target.logical,
          patched: true,
        },
        createdBy: ctx.callId,
      });
    }
    streamFile(ctx, channel, kind, target, text);
    return {
      ok: true,
      text: JSON.stringify({
        status: 'patched',
        path: target.logical,
        bytes: Buffer.byteLength(text, 'utf8'),
        lines: countLines(text),
        ...stats,
      }),
      mime: 'application/json',
      meta: { artifact: target.key, logical_path: target.logical, channel, kind },
    };
  },
};
