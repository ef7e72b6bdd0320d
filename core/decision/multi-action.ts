/**
 * Multi-action rounds (`safe_fanout`): several ReactDecisionOutV2 instances in one
 * response, accepted or rejected by the ordered strategy matrix. Accepted actions run
 * sequentially. Pure and deterministic; core does not read env — the mode is an option.
 */
import type { StrategyTrait, ToolRegistry } from '../tools/registry';
import type { Decision } from './schema';
import { notice, type Notice } from './notice';

export type MultiActionMode = 'off' | 'safe_fanout';

export const MAX_ACTIONS_PER_ROUND = 2;

/** Maps a configuration string (e.g. AI_REACT_AGENT_MULTI_ACTION, read by the caller) to a mode. */
export function parseMultiActionMode(value: string | undefined | null): MultiActionMode {
  const v = (value ?? '').trim().toLowerCase();
  if (['on', 'true', '1', 'yes', 'safe_fanout', 'fanout'].includes(v)) return 'safe_fanout';
  if (['', 'off', 'false', '0', 'no'].includes(v)) return 'off';
  throw new Error(`unknown multi-action mode ${JSON.stringify(value)} (use off or safe_fanout)`);
}

/**
 * Ordered strategy matrix: may an action with trait `then` follow an accepted action with
 * trait `first` in the same round? Exploration then exploitation is rejected (the write
 * could not see what the read returns); exploitation then exploration is fine.
 */
export const STRATEGY_MATRIX: Readonly<Record<StrategyTrait, Readonly<Record<StrategyTrait, boolean>>>> = {
  exploration: { exploration: true, exploitation: false, neutral: true, unknown: false },
  exploitation: { exploration: true, exploitation: true, neutral: true, unknown: false },
  neutral: { exploration: true, exploitation: true, neutral: true, unknown: false },
  unknown: { exploration: false, exploitation: false, neutral: false, unknown: false },
};

export function strategyAllows(first: StrategyTrait, then: StrategyTrait): boolean {
  return STRATEGY_MATRIX[first][then];
}

/** Canonical form of a workspace path for collision checks. */
export function canonicalPath(path: string): string {
  let p = path
    .trim()
    .replace(/\\/g, '/')
    .replace(/\/{2,}/g, '/');
  while (p.startsWith('./')) p = p.slice(2);
  p = p
    .split('/')
    .filter((seg) => seg !== '.')
    .join('/');
  return p.length > 1 ? p.replace(/\/+$/, '') : p;
}

function isFinal(d: Decision): boolean {
  return d.action !== 'call_tool';
}

function label(d: Decision): string {
  return d.action === 'call_tool' ? d.tool_call.tool_id : d.action;
}

export interface BundleResult {
  accepted: Decision[];
  notices: Notice[];
}

/**
 * Applies the safe-fanout rules to valid decisions in response order:
 * at most MAX_ACTIONS_PER_ROUND; tools that are not bundle-safe run alone; unknown-strategy
 * tools only as a lone first action; each candidate is checked against ALL accepted
 * actions with the strategy matrix; no two writes to one canonical path; complete/exit only
 * after neutral tools and only neutral tools after it; one final action per round.
 */
export function selectBundle(
  candidates: readonly Decision[],
  registry: ToolRegistry,
  mode: MultiActionMode,
): BundleResult {
  const accepted: Decision[] = [];
  const notices: Notice[] = [];
  if (candidates.length === 0) return { accepted, notices };

  if (mode === 'off') {
    accepted.push(candidates[0]!);
    for (const extra of candidates.slice(1)) {
      notices.push(
        notice(
          'multi_action_disabled',
          `only one ReactDecisionOutV2 per response is allowed; ignored extra action ${label(extra)}`,
          {
            instance: extra.instance,
          },
        ),
      );
    }
    return { accepted, notices };
  }

  const traitOf = (d: Decision): StrategyTrait =>
    d.action === 'call_tool' ? registry.get(d.tool_call.tool_id).strategy : 'neutral';
  const bundleSafe = (d: Decision): boolean =>
    d.action !== 'call_tool' || registry.get(d.tool_call.tool_id).bundleSafe !== false;
  const writtenPaths = new Map<string, number>();
  const recordPath = (d: Decision): void => {
    if (d.action !== 'call_tool') return;
    const p = registry.writesPath(d.tool_call.tool_id, d.tool_call.params);
    if (p !== undefined) writtenPaths.set(canonicalPath(p), d.instance);
  };

  for (const cand of candidates) {
    const reject = (code: Parameters<typeof notice>[0], message: string, details?: Record<string, unknown>): void => {
      notices.push(
        notice(code, `rejected action ${label(cand)}: ${message}`, {
          instance: cand.instance,
          ...(details ? { details } : {}),
        }),
      );
    };
    if (accepted.length === 0) {
      accepted.push(cand);
      recordPath(cand);
      continue;
    }
    if (accepted.length >= MAX_ACTIONS_PER_ROUND) {
      reject('multi_action_bundle_too_many_actions', `at most ${MAX_ACTIONS_PER_ROUND} actions per round`);
      continue;
    }
    const first = accepted.find((a) => !bundleSafe(a));
    if (first) {
      reject('multi_action_bundle_unsafe_tool', `${label(first)} must run alone in its round`);
      continue;
    }
    if (!bundleSafe(cand)) {
      reject('multi_action_bundle_unsafe_tool', `${label(cand)} cannot run in a multi-action bundle`);
      continue;
    }
    const trait = traitOf(cand);
    if (trait === 'unknown') {
      reject('multi_action_bundle_unsafe_tool', 'tools without a strategy trait may only run as a single action', {
        tool_id: label(cand),
        strategy: trait,
      });
      continue;
    }
    if (isFinal(cand)) {
      if (accepted.some(isFinal)) {
        reject('multi_action_bundle_mixed_actions', 'only one complete/exit per round', { action: cand.action });
        continue;
      }
      const nonNeutral = accepted.find((a) => traitOf(a) !== 'neutral');
      if (nonNeutral) {
        reject(
          'multi_action_bundle_final_answer_after_non_neutral',
          `${cand.action} may only follow neutral tools (it follows ${label(nonNeutral)}); answer in the next round`,
        );
        continue;
      }
    } else if (accepted.some(isFinal) && trait !== 'neutral') {
      reject('multi_action_bundle_non_neutral_after_final_answer', 'only neutral tools may follow complete/exit');
      continue;
    }
    const conflict = accepted.find((a) => !strategyAllows(traitOf(a), trait));
    if (conflict) {
      reject(
        'multi_action_bundle_strategy_incompatible',
        `${trait} after ${traitOf(conflict)} (${label(conflict)}) is not allowed in one round; it could not use the earlier result`,
        {
          tool_id: label(cand),
          strategy: trait,
          first_index: conflict.instance,
          first_tool_id: label(conflict),
          first_strategy: traitOf(conflict),
        },
      );
      continue;
    }
    if (cand.action === 'call_tool') {
      const p = registry.writesPath(cand.tool_call.tool_id, cand.tool_call.params);
      if (p !== undefined && writtenPaths.has(canonicalPath(p))) {
        reject(
          'multi_action_bundle_same_file_collision',
          `another action in this round already writes ${canonicalPath(p)}`,
        );
        continue;
      }
    }
    accepted.push(cand);
    recordPath(cand);
  }
  return { accepted, notices };
}
