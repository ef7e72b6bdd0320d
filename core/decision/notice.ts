/**
 * Validation notices and the `react.notice` blocks the model sees on the next round.
 * Pure and deterministic.
 */
import { makeBlock, type Block } from '../timeline/block';

export const NOTICE_CODES = [
  // protocol shape
  'decision_preamble_before_first_channel',
  'decision_first_channel_not_thinking',
  'decision_missing_protocol_channels',
  // decision object
  'invalid_json',
  'invalid_decision_schema',
  'invalid_action',
  'missing_tool_id',
  'unknown_tool',
  'invalid_params',
  'final_answer_with_tool_call',
  'tool_call_with_final_answer',
  'final_answer_with_notes',
  'final_answer_required',
  // react.write parameter order
  'path_not_first',
  'channel_not_second',
  'content_not_third',
  'kind_not_fourth',
  // side channels
  'code_channel_without_single_exec',
  'answer_channel_without_completion',
  'summary_without_completion',
  'invalid_followup_channel',
  // several ReactDecisionOutV2 instances
  'multi_action_disabled',
  'multi_action_bundle_too_many_actions',
  'multi_action_bundle_unsafe_tool',
  'multi_action_bundle_strategy_incompatible',
  'multi_action_bundle_same_file_collision',
  'multi_action_bundle_final_answer_after_non_neutral',
  'multi_action_bundle_non_neutral_after_final_answer',
  'multi_action_bundle_mixed_actions',
] as const;
export type NoticeCode = (typeof NOTICE_CODES)[number];

export interface Notice {
  code: NoticeCode;
  message: string;
  /** error: the action (or the round) was rejected; warning: something was ignored. */
  severity: 'error' | 'warning';
  /** ReactDecisionOutV2 instance the notice is about, if any. */
  instance?: number;
  /** Extra machine-readable facts (zod issues, offending keys, tool ids...). */
  details?: Record<string, unknown>;
}

export function notice(
  code: NoticeCode,
  message: string,
  extra: Partial<Omit<Notice, 'code' | 'message'>> = {},
): Notice {
  const n: Notice = { code, message, severity: extra.severity ?? 'error' };
  if (extra.instance !== undefined) n.instance = extra.instance;
  if (extra.details !== undefined) n.details = extra.details;
  return n;
}

/** Prefix of the code the model reads in a decision notice (the reference's `protocol_violation.<code>`). */
export const PROTOCOL_VIOLATION_PREFIX = 'protocol_violation.';

/**
 * The JSON text of a react.notice block: `{code: "protocol_violation.<code>", message, severity,
 * instance?, ...details}` (`invalid_action:<x>` for an invalid action). Block meta keeps the bare code.
 */
export function noticeText(n: Notice): string {
  // invalid_action names the action it got, as the reference's `invalid_action:<x>`.
  const action = n.code === 'invalid_action' ? n.details?.action : undefined;
  const code = typeof action === 'string' ? `${n.code}:${action}` : n.code;
  const body: Record<string, unknown> = {
    code: `${PROTOCOL_VIOLATION_PREFIX}${code}`,
    message: n.message,
    severity: n.severity,
  };
  if (n.instance !== undefined) body.instance = n.instance;
  for (const [k, v] of Object.entries(n.details ?? {})) if (!(k in body)) body[k] = v;
  return JSON.stringify(body);
}

export interface NoticeBlockArgs {
  turnId: string;
  /** ISO timestamp (time is a parameter; core never reads the clock). */
  ts: string;
  /** Round the notice belongs to (stored as `meta.iteration`, the persisted name). */
  round: number;
  notice: Notice;
  /** Position among the round's notices (keeps block ids unique and deterministic). */
  index?: number;
  /** True when the whole round failed (nothing was executed). */
  failedRound?: boolean;
}

/** A `react.notice` block (author react, JSON text) the model sees on the next round. */
export function noticeBlock(args: NoticeBlockArgs): Block {
  const { turnId, ts, round, notice: n, index = 0, failedRound = false } = args;
  return makeBlock({
    type: 'react.notice',
    author: 'react',
    turn_id: turnId,
    ts,
    mime: 'application/json',
    text: noticeText(n),
    key: `${round}.${index}`,
    meta: {
      rel: 'call',
      iteration: round,
      failed_round: failedRound,
      code: n.code,
      severity: n.severity,
      ...(failedRound ? { reason: n.code } : {}),
    },
  });
}

/**
 * Blocks for a failed decision round, in timeline order: `react.notes` (when the model
 * wrote notes), `react.decision.raw` (the raw response, so the model can see what it
 * wrote) and one `react.notice` per notice.
 */
export function failedDecisionBlocks(args: {
  turnId: string;
  ts: string;
  /** Round of the failed decision (stored as `meta.iteration`). */
  round: number;
  raw: string;
  notes?: string;
  notices: readonly Notice[];
}): Block[] {
  const { turnId, ts, round } = args;
  const blocks: Block[] = [];
  if (args.notes && args.notes.trim()) {
    blocks.push(
      makeBlock({
        type: 'react.notes',
        author: 'react',
        turn_id: turnId,
        ts,
        text: args.notes,
        key: round,
        meta: { iteration: round, failed_round: true },
      }),
    );
  }
  blocks.push(
    makeBlock({
      type: 'react.decision.raw',
      author: 'assistant',
      turn_id: turnId,
      ts,
      mime: 'text/plain',
      text: args.raw,
      key: round,
      meta: { iteration: round, failed_round: true },
    }),
  );
  args.notices.forEach((n, index) =>
    blocks.push(noticeBlock({ turnId, ts, round, notice: n, index, failedRound: true })),
  );
  return blocks;
}
