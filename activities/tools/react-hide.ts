/**
 * react.hide: replaces a block of the editable tail with a short placeholder (an overlay; the
 * append-only block keeps its text, so react.read recovers it). The tail-window rule lives in
 * core/timeline/hide.ts (`checkHide`); a refusal appends a `react.notice` explaining why
 * (`hide_before_cache`, `hide_too_old` with tail_tokens / tail_limit, `not_found`).
 * Result JSON: `{path, status: hidden|too_old|not_found, blocks_hidden, tokens_hidden, tail_tokens, tail_limit}`.
 */
import type { Block } from '../../core/timeline/block';
import { checkHide, hideRefusalNotice, SUPPRESS_PREV_TURN_CACHE } from '../../core/timeline/hide';
import type { ToolImpl } from './types';

/** Overlay `reason` of the blocks one hide call touched (lets a retried attempt recognise them). */
export function hideReason(callId: string): string {
  return `react.hide ${callId}`;
}

function unhidden(b: Block): Block {
  const { hidden: _h, replacement_text: _r, ...rest } = b;
  return rest;
}

export const reactHideImpl: ToolImpl = {
  id: 'react.hide',
  async run(params, ctx) {
    const path = typeof params.path === 'string' ? params.path.trim() : '';
    if (!path) return { ok: false, text: 'react.hide needs a path (the logical path of a recent block)' };
    const replacement = typeof params.replacement === 'string' ? params.replacement : undefined;
    const reason = hideReason(ctx.callId);
    // A retried attempt judges the timeline as its first attempt saw it (before its own overlays).
    const mine = new Set(await ctx.store.overlaidBlockIds(reason));
    const blocks = (await ctx.store.blocks()).map((b) => (mine.has(b.id) ? unhidden(b) : b));
    const res = checkHide(blocks, path, {
      currentTurnId: ctx.turnId,
      ...(replacement !== undefined ? { replacement } : {}),
    });
    if (!res.ok) {
      const status = res.code === 'not_found' ? 'not_found' : 'too_old';
      const call = blocks.find((b) => b.type === 'react.tool.call' && b.call_id === ctx.callId);
      const notice = hideRefusalNotice(res, ctx.turnId, call?.ts ?? ctx.now().toISOString(), ctx.callId);
      const body: Record<string, unknown> = {
        path,
        status,
        code: res.code,
        message: res.message,
        blocks_hidden: 0,
        tokens_hidden: 0,
      };
      if (res.tail_tokens !== undefined) body.tail_tokens = res.tail_tokens;
      if (res.tail_limit !== undefined) body.tail_limit = res.tail_limit;
      if (res.code === 'hide_before_cache') body.before_cache = true;
      return {
        ok: false,
        text: JSON.stringify(body),
        mime: 'application/json',
        blocks: [notice],
        meta: { hide_refused: res.code },
      };
    }
    await ctx.store.setOverlays(
      res.updates.map((u) => ({ blockId: u.blockId, hidden: true, replacementText: u.replacement_text, reason })),
    );
    return {
      ok: true,
      text: JSON.stringify({
        path,
        status: 'hidden',
        blocks_hidden: res.hiddenBlockIds.length,
        tokens_hidden: res.tokensHidden,
        tail_tokens: res.tail_tokens,
        tail_limit: res.tail_limit,
        replacement: res.replacementText,
      }),
      mime: 'application/json',
      meta: { hidden_block_ids: res.hiddenBlockIds, [SUPPRESS_PREV_TURN_CACHE]: true },
    };
  },
};
