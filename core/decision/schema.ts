/**
 * The decision wire format (runtime-owned protocol, not provider tool calling).
 *
 * A decision response is a sequence of channels:
 *   <channel:thinking>…</channel:thinking>
 *   <channel:ReactDecisionOutV2>{ one JSON object, optionally in a ```json fence }</channel:ReactDecisionOutV2>
 *   [<channel:code>raw code for the exec tool</channel:code>]
 *   [<channel:answer>user-facing markdown with [[S:n]]</channel:answer>]      complete/exit only
 *   [<channel:followup>{"followups":[…]}</channel:followup>]                 complete/exit only
 *   [<channel:summary>hidden working summary</channel:summary>]               complete/exit only
 * External harnesses drive the runtime with exactly this shape; keep it stable.
 */
import { z } from 'zod';
import type { ChannelSpec } from '../channels/types';

export const DECISION_CHANNEL = 'ReactDecisionOutV2';
export const THINKING_CHANNEL = 'thinking';
export const CODE_CHANNEL = 'code';
export const ANSWER_CHANNEL = 'answer';
export const FOLLOWUP_CHANNEL = 'followup';
export const SUMMARY_CHANNEL = 'summary';

/** Channel specs of a decision response, for the channel parser. */
export const DECISION_CHANNEL_SPECS: readonly ChannelSpec[] = [
  { name: THINKING_CHANNEL, format: 'markdown', marker: 'thinking' },
  { name: DECISION_CHANNEL, format: 'json', marker: 'decision' },
  { name: CODE_CHANNEL, format: 'code', marker: 'subsystem' },
  { name: ANSWER_CHANNEL, format: 'markdown', marker: 'answer', citations: true },
  { name: FOLLOWUP_CHANNEL, format: 'json', marker: 'followup' },
  { name: SUMMARY_CHANNEL, format: 'markdown', marker: 'subsystem' },
];

export const DECISION_ACTIONS = ['call_tool', 'complete', 'exit'] as const;
export type DecisionAction = (typeof DECISION_ACTIONS)[number];

export const ToolCallSchema = z.object({
  tool_id: z.string().describe('Id of a listed tool.'),
  params: z.record(z.string(), z.unknown()).describe("The tool's parameters, matching its JSON schema."),
});

/** Canonical schema of one decision object, used to teach the protocol (and for docs). */
export const ReactDecisionOutV2Schema = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('call_tool'),
    notes: z.string().describe('Short progress note shown to the user.'),
    tool_call: ToolCallSchema,
  }),
  z.object({
    action: z.literal('complete'),
    notes: z.string(),
    final_answer: z.string().optional().describe('The answer, when no <channel:answer> is written.'),
    suggested_followups: z.array(z.string()).optional(),
  }),
  z.object({
    action: z.literal('exit'),
    notes: z.string(),
    final_answer: z
      .string()
      .optional()
      .describe('Why the turn stops, for the user, when no <channel:answer> is written.'),
  }),
]);

/**
 * Loose shape check applied before the semantic checks (so that every problem gets its
 * own notice code rather than one opaque union error).
 */
export const DecisionEnvelopeSchema = z.looseObject({
  action: z.unknown().optional(),
  notes: z.string().optional(),
  tool_call: z.unknown().optional(),
  final_answer: z.string().nullable().optional(),
  suggested_followups: z.array(z.string()).nullable().optional(),
});

export const FollowupChannelSchema = z.object({ followups: z.array(z.string()) });

/** A validated decision (one action). `instance` is its ReactDecisionOutV2 instance index. */
export type Decision =
  | {
      action: 'call_tool';
      notes: string;
      instance: number;
      tool_call: { tool_id: string; params: Record<string, unknown> };
    }
  | { action: 'complete'; notes: string; instance: number; final_answer?: string; suggested_followups?: string[] }
  | { action: 'exit'; notes: string; instance: number; final_answer?: string };
