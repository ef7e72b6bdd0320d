/**
 * Resolves a logical path against the timeline blocks. Pure and deterministic.
 *
 * Timeline-backed paths return the matching blocks (raw: hidden/pruned blocks keep their
 * original content, so reads recover it). Paths backed by something other than blocks
 * (sources pool, reconstructed turn index, skills, knowledge space, workspace files) return
 * a typed pointer for the caller to dispatch on.
 */
import type { Block } from './block';
import { formatPath, localizePath, parsePath, physicalPath, type LogicalPath } from './paths';
import { parsePlanBlock } from './plans';

export type PathResolution =
  | { source: 'timeline'; path: LogicalPath; canonical: string; blocks: Block[] }
  | { source: 'workspace'; path: LogicalPath; canonical: string; physical: string; blocks: Block[] }
  /** `foreignConversation`: the selector names another conversation; `sids` is then `[]` (no rows here). */
  | {
      source: 'sources_pool';
      path: LogicalPath;
      canonical: string;
      sids: number[] | null;
      foreignConversation?: string;
    }
  | { source: 'turn_index'; path: LogicalPath; canonical: string; turnId: string }
  | { source: 'skill'; path: LogicalPath; canonical: string; name: string }
  | { source: 'knowledge'; path: LogicalPath; canonical: string; rel: string };

/** A stored block path in bare form (`conv:` prefixes from older data are tolerated). */
export function barePath(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  return path.startsWith('conv:') ? path.slice(5) : path;
}

function byPath(blocks: Block[], canonical: string): Block[] {
  return blocks.filter((b) => barePath(b.path) === canonical);
}

function nth<T>(items: T[], n: number | undefined): T[] {
  if (items.length === 0) return [];
  if (n === undefined) return [items[items.length - 1]!];
  const item = items[n - 1];
  return item === undefined ? [] : [item];
}

export interface ResolveOptions {
  /** The current conversation: owner segments `conv_<id>.` naming it are stripped (localized). */
  conversationId?: string;
}

/**
 * Finds what a path denotes in `blocks`. Throws on a malformed path, and on a block or file ref
 * owned by another conversation; a sources selector of another conversation resolves to no rows.
 */
export function resolvePath(blocks: Block[], input: string | LogicalPath, opts: ResolveOptions = {}): PathResolution {
  const text = typeof input === 'string' ? input : formatPath(input);
  const path = parsePath(opts.conversationId === undefined ? text : localizePath(text, opts.conversationId));
  const canonical = formatPath(path);
  switch (path.kind) {
    case 'so.pool':
      if (path.conversationId !== undefined && path.conversationId !== opts.conversationId) {
        return { source: 'sources_pool', path, canonical, sids: [], foreignConversation: path.conversationId };
      }
      return { source: 'sources_pool', path, canonical, sids: path.sids };
    case 'ar.turn.index':
      return { source: 'turn_index', path, canonical, turnId: path.turnId };
    case 'sk.skill':
      return { source: 'skill', path, canonical, name: path.name };
    case 'ks.knowledge':
      return { source: 'knowledge', path, canonical, rel: path.rel };
    case 'fi.files':
    case 'fi.outputs':
    case 'fi.git':
    case 'fi.user.attachment':
    case 'fi.external.attachment':
      return { source: 'workspace', path, canonical, physical: physicalPath(path)!, blocks: byPath(blocks, canonical) };
    case 'ar.completion': {
      const all = blocks.filter((b) => b.type === 'assistant.completion' && b.turn_id === path.turnId);
      return { source: 'timeline', path, canonical, blocks: nth(all, path.n) };
    }
    case 'ws.working.summary': {
      const all = blocks.filter((b) => b.type === 'conv.working.summary' && b.turn_id === path.turnId);
      return { source: 'timeline', path, canonical, blocks: nth(all, path.attempt) };
    }
    case 'ar.plan.latest': {
      const all = blocks.filter((b) => b.type === 'react.plan' && planIdOf(b) === path.planId);
      return { source: 'timeline', path, canonical, blocks: nth(all, undefined) };
    }
    case 'su.range.summary': {
      const exact = byPath(blocks, canonical);
      const found =
        exact.length > 0 ? exact : blocks.filter((b) => b.type === 'conv.range.summary' && b.turn_id === path.turnId);
      return { source: 'timeline', path, canonical, blocks: found };
    }
    case 'ar.user.prompt': {
      const exact = byPath(blocks, canonical);
      const found =
        exact.length > 0 ? exact : blocks.filter((b) => b.type === 'user.prompt' && b.turn_id === path.turnId);
      return { source: 'timeline', path, canonical, blocks: found };
    }
    default:
      return { source: 'timeline', path, canonical, blocks: byPath(blocks, canonical) };
  }
}

function planIdOf(block: Block): string {
  const fromMeta = block.meta['plan_id'];
  if (typeof fromMeta === 'string' && fromMeta) return fromMeta;
  return parsePlanBlock(block).plan_id;
}
