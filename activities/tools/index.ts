/**
 * Tool implementations available to the tool activity, by tool id, and the params check the
 * activity runs before a tool (invalid params become an observation, never a failure).
 */
import { makeBlock, type Block } from '../../core/timeline/block';
import { checkParamOrder } from '../../core/decision/validate';
import { notice, noticeText, type Notice } from '../../core/decision/notice';
import type { ToolRegistry } from '../../core/tools/registry';
import type { ToolImpl } from './types';
import { createReactReadImpl } from './react-read';
import { createSearchKnowledgeImpl } from './react-search-knowledge';
import type { Library } from '../library/library';
import { reactWriteImpl } from './react-write';
import { reactPlanImpl } from './react-plan';
import { reactHideImpl } from './react-hide';
import { reactPatchImpl } from './react-patch';
import { reactCheckoutImpl, reactPullImpl } from './react-checkout';
import { reactRgImpl } from './react-rg';
import { createMemsearchImpl } from './react-memsearch';
import type { EmbeddingProvider } from '../memory/embeddings';
import { createWebFetchImpl, type WebFetchOptions } from './web-fetch';
import { createWebSearchImpl, type WebSearchProvider } from './web-search';

export interface BuiltinToolOptions {
  /** web_fetch settings (e.g. `allowPrivateNetwork` for local pages in tests). */
  webFetch?: Omit<WebFetchOptions, 'signal'>;
  /** web_search backend (default: resolved from the environment on first use). */
  webSearch?: WebSearchProvider;
  /** Embeddings for react.memsearch's semantic half (absent: lexical only). */
  embeddings?: EmbeddingProvider;
  /** Skills and knowledge space (sk: / ks: reads, react.search_knowledge) when configured. */
  library?: Library;
}

/**
 * Every built-in tool (react.read/write/plan/hide/patch/pull/checkout/rg/memsearch, web_fetch,
 * web_search; react.search_knowledge with a knowledge space) plus `extra`; extras replace
 * built-ins with the same id.
 */
export function builtinTools(extra: ToolImpl[] = [], opts: BuiltinToolOptions = {}): Map<string, ToolImpl> {
  const all = [
    createReactReadImpl(opts.library),
    reactWriteImpl,
    reactPlanImpl,
    reactHideImpl,
    reactPatchImpl,
    reactPullImpl,
    reactCheckoutImpl,
    reactRgImpl,
    createMemsearchImpl(opts.embeddings),
    createWebFetchImpl(opts.webFetch),
    createWebSearchImpl(opts.webSearch),
    ...(opts.library?.knowledge ? [createSearchKnowledgeImpl(opts.library.knowledge)] : []),
    ...extra,
  ];
  return new Map(all.map((t) => [t.id, t]));
}

export type ToolParamsCheck =
  { ok: true; params: Record<string, unknown> } | { ok: false; text: string; notices: Notice[] };

/**
 * Validates a recorded call's params against the tool's declaration: parameter order (react.write:
 * path → channel → content → kind) and the zod schema (defaults applied on success). Tools
 * without a declaration pass through unchanged.
 */
export function checkToolParams(registry: ToolRegistry | undefined, toolId: string, raw: unknown): ToolParamsCheck {
  const decl = registry?.find(toolId);
  const isObject = raw !== null && typeof raw === 'object' && !Array.isArray(raw);
  if (!isObject) {
    const n = notice('invalid_params', `${toolId}: params must be a JSON object`, { details: { tool_id: toolId } });
    return { ok: false, text: `${n.message}. Nothing was run; call the tool again with valid params.`, notices: [n] };
  }
  const params = raw as Record<string, unknown>;
  if (!decl || !registry) return { ok: true, params };
  const notices: Notice[] = [];
  const order = decl.paramOrder ? checkParamOrder(toolId, params, decl.paramOrder) : undefined;
  if (order) notices.push(order);
  const parsed = registry.parseParams(toolId, params);
  if (!parsed.ok) {
    const issues = parsed.issues.map((i) => `${i.path || '(params)'}: ${i.message}`).join('; ');
    notices.push(
      notice('invalid_params', `${toolId}: invalid params: ${issues}`, {
        details: { tool_id: toolId, issues: parsed.issues },
      }),
    );
  }
  if (notices.length > 0) {
    const schema = JSON.stringify(registry.jsonSchema(toolId));
    return {
      ok: false,
      text: `${notices.map((n) => n.message).join('\n')}\nNothing was run. Expected params (JSON schema): ${schema}`,
      notices,
    };
  }
  return { ok: true, params: parsed.ok ? parsed.params : params };
}

/** `react.notice` blocks for rejected params, in the call's round (keyed by call id). */
export function paramsNoticeBlocks(turnId: string, callId: string, ts: string, notices: Notice[]): Block[] {
  return notices.map((n, i) =>
    makeBlock({
      type: 'react.notice',
      author: 'react',
      turn_id: turnId,
      ts,
      key: `params.${callId}.${i}`,
      call_id: callId,
      mime: 'application/json',
      text: noticeText(n),
      meta: { rel: 'call', code: n.code, severity: n.severity, tool_params: true },
    }),
  );
}
