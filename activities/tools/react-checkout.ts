/**
 * react.pull and react.checkout: historical `fi:` refs brought into the current turn, as
 * blob-sharing copies (no bytes copied). Pull records read-only refs beside the workspace
 * (`<turn>/pulled/<historical key>`; exec sees them under `<turn>/files/…`); checkout builds the
 * editable `files/` tree (replace or overlay, later refs win). Both are one transaction and
 * idempotent: a retry writes the same rows.
 */
import {
  checkoutKey,
  logicalOfKey,
  parseHistoricalRef,
  pulledKey,
  refCovers,
  type HistoricalRef,
} from '../../core/workspace/refs';
import type { FileCopy } from '../../store/workspace-store';
import type { ToolContext, ToolImpl } from './types';

interface Resolved {
  ref: HistoricalRef;
  keys: string[];
}

/** Resolves refs to the stored keys they cover; unparseable refs become errors, empty ones missing. */
async function resolveRefs(
  ctx: ToolContext,
  raw: readonly string[],
  allowed: ReadonlyArray<HistoricalRef['area']>,
): Promise<{ resolved: Resolved[]; missing: string[]; errors: Array<{ path: string; error: string }> }> {
  const resolved: Resolved[] = [];
  const missing: string[] = [];
  const errors: Array<{ path: string; error: string }> = [];
  const byTurn = new Map<string, string[]>();
  for (const path of raw) {
    let ref: HistoricalRef;
    try {
      ref = parseHistoricalRef(path, ctx.turnId, allowed);
    } catch (err) {
      errors.push({ path, error: (err as Error).message });
      continue;
    }
    if (!byTurn.has(ref.turnId)) byTurn.set(ref.turnId, await ctx.store.listFiles(`${ref.turnId}/`));
    const keys = byTurn.get(ref.turnId)!.filter((k) => refCovers(ref, k));
    if (keys.length === 0) missing.push(path);
    else resolved.push({ ref, keys });
  }
  return { resolved, missing, errors };
}

export const reactPullImpl: ToolImpl = {
  id: 'react.pull',
  async run(params, ctx) {
    const paths = (params.paths as string[] | undefined) ?? [];
    const { resolved, missing, errors } = await resolveRefs(ctx, paths, ['files', 'outputs', 'attachments']);
    const copies: FileCopy[] = resolved.flatMap(({ keys }) =>
      keys.map((k) => ({ fromKey: k, toKey: pulledKey(ctx.turnId, k), origin: logicalOfKey(k) })),
    );
    if (copies.length > 0) await ctx.store.pull(ctx.turnId, copies, ctx.callId);
    const pulled = copies.map((c) => c.origin);
    const ok = errors.length === 0 && missing.length === 0;
    return {
      ok: ok || pulled.length > 0,
      text: JSON.stringify({
        status: ok ? 'pulled' : pulled.length > 0 ? 'partial' : 'nothing_pulled',
        pulled,
        read_only: true,
        note:
          pulled.length > 0
            ? 'pulled refs are read-only; exec sees them under <turn>/files/…; react.checkout makes files editable'
            : undefined,
        missing,
        ...(errors.length > 0 ? { errors } : {}),
      }),
      mime: 'application/json',
      meta: { pulled },
    };
  },
};

export const reactCheckoutImpl: ToolImpl = {
  id: 'react.checkout',
  async run(params, ctx) {
    const mode = params.mode === 'overlay' ? 'overlay' : 'replace';
    const paths = (params.paths as string[] | undefined) ?? [];
    const { resolved, missing, errors } = await resolveRefs(ctx, paths, ['files']);
    // Later refs win: keep the last copy per target key, in first-seen target order.
    const byTarget = new Map<string, FileCopy>();
    for (const { keys } of resolved) {
      for (const k of keys) {
        const toKey = checkoutKey(ctx.turnId, k);
        byTarget.delete(toKey);
        byTarget.set(toKey, { fromKey: k, toKey, origin: logicalOfKey(k) });
      }
    }
    const copies = [...byTarget.values()];
    // Nothing to check out and mode=replace would only empty the workspace: refuse instead.
    if (copies.length === 0) {
      return {
        ok: false,
        text: JSON.stringify({
          mode,
          status: 'nothing_checked_out',
          checked_out_from: [],
          checked_out: [],
          materialized: [],
          missing,
          errors,
        }),
        mime: 'application/json',
      };
    }
    const { removed } = await ctx.store.checkout(ctx.turnId, mode, copies, ctx.callId);
    const checkedOutFrom = [...new Set(resolved.map((r) => r.ref.turnId))];
    return {
      ok: true,
      text: JSON.stringify({
        mode,
        checked_out_from: checkedOutFrom,
        checked_out: resolved.map((r) => r.ref.logical),
        materialized: copies.map((c) => logicalOfKey(c.toKey)),
        missing,
        errors,
        ...(mode === 'replace' && removed > 0 ? { replaced_files: removed } : {}),
      }),
      mime: 'application/json',
      meta: { checked_out_from: checkedOutFrom, materialized: copies.length },
    };
  },
};
