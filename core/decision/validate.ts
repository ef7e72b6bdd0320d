/**
 * Semantic validation of one ReactDecisionOutV2 instance: JSON → envelope → action →
 * tool → params → parameter order. Every problem becomes a notice with its own code.
 * Pure and deterministic.
 */
import type { ToolRegistry } from '../tools/registry';
import { DECISION_ACTIONS, DecisionEnvelopeSchema, type Decision, type DecisionAction } from './schema';
import { notice, type Notice, type NoticeCode } from './notice';

export interface InstanceValidation {
  decision?: Decision;
  notices: Notice[];
  /** The notes the model wrote, even when the decision is invalid (for react.notes). */
  notes?: string;
}

const FENCE_RE = /^```[a-zA-Z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;

/** Strips one optional ```json fence around the decision object. */
export function stripJsonFence(text: string): string {
  const t = text.trim();
  const m = FENCE_RE.exec(t);
  return m ? (m[1] ?? '').trim() : t;
}

/** Parses the JSON text of one instance; a readable notice on failure. */
export function parseDecisionJson(
  text: string,
  instance: number,
): { ok: true; value: unknown } | { ok: false; notice: Notice } {
  const body = stripJsonFence(text);
  if (!body) {
    return {
      ok: false,
      notice: notice('invalid_json', 'the ReactDecisionOutV2 channel is empty; write one JSON object', { instance }),
    };
  }
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      notice: notice(
        'invalid_json',
        `the ReactDecisionOutV2 channel must hold exactly one JSON object (optionally in a \`\`\`json fence): ${reason}`,
        { instance },
      ),
    };
  }
}

/** Codes for react.write params written out of the order path → channel → content → kind. */
export const WRITE_PARAM_ORDER_CODES: readonly NoticeCode[] = [
  'path_not_first',
  'channel_not_second',
  'content_not_third',
  'kind_not_fourth',
];
const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth'];

/**
 * Checks the key order of a params object as written, positionally (as the reference runtime
 * does): the i-th key written must be the i-th name of `order`, for as many keys as were
 * written; reports the first violation (a missing middle key is reported at its position).
 * For react.write the codes are path_not_first, channel_not_second, content_not_third,
 * kind_not_fourth.
 */
export function checkParamOrder(
  toolId: string,
  params: Record<string, unknown>,
  order: readonly string[],
  instance?: number,
): Notice | undefined {
  const keys = Object.keys(params);
  for (let i = 0; i < Math.min(order.length, keys.length); i++) {
    const name = order[i]!;
    if (keys[i] === name) continue;
    const code: NoticeCode =
      i < WRITE_PARAM_ORDER_CODES.length && toolId === 'react.write' ? WRITE_PARAM_ORDER_CODES[i]! : 'invalid_params';
    return notice(
      code,
      `${toolId}: parameter "${name}" must be written ${ORDINALS[i] ?? `#${i + 1}`}; write params in the order ${order.join(' → ')} (got ${keys.join(', ')})`,
      { instance, details: { tool_id: toolId, expected_order: [...order], got_order: keys } },
    );
  }
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export interface ValidateOptions {
  /**
   * A call_tool's non-empty final_answer is dropped with a warning instead of failing the
   * action (the reference's multi-action runtime); default false: final_answer_with_tool_call.
   */
  suppressToolCallAnswer?: boolean;
}

/** Validates one parsed decision object against the protocol and the registry. */
export function validateDecisionObject(
  value: unknown,
  instance: number,
  registry: ToolRegistry,
  opts: ValidateOptions = {},
): InstanceValidation {
  const env = DecisionEnvelopeSchema.safeParse(value);
  if (!env.success) {
    const issues = env.error.issues.map((i) => ({
      path: i.path.map(String).join('.') || '(decision)',
      message: i.message,
    }));
    return {
      notices: [
        notice(
          'invalid_decision_schema',
          `the decision must be a JSON object {"action", "notes", ...}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
          {
            instance,
            details: { issues },
          },
        ),
      ],
    };
  }
  const d = env.data;
  const notes = d.notes ?? '';
  const fail = (n: Notice): InstanceValidation => ({ notices: [n], notes });

  if (typeof d.action !== 'string' || !(DECISION_ACTIONS as readonly string[]).includes(d.action)) {
    return fail(
      notice(
        'invalid_action',
        `invalid action ${JSON.stringify(d.action)}; use one of ${DECISION_ACTIONS.join(', ')}`,
        {
          instance,
          details: { action: d.action ?? null },
        },
      ),
    );
  }
  const action = d.action as DecisionAction;
  const finalAnswer = typeof d.final_answer === 'string' ? d.final_answer : undefined;
  const hasToolCall = d.tool_call !== undefined && d.tool_call !== null;

  if (action !== 'call_tool') {
    if (hasToolCall) {
      return fail(
        notice(
          'tool_call_with_final_answer',
          `action "${action}" must not carry a tool_call; use action "call_tool" to call a tool`,
          { instance },
        ),
      );
    }
    const hasAnswer = finalAnswer !== undefined && finalAnswer.trim() !== '';
    if (hasAnswer && notes.trim() !== '') {
      return fail(
        notice(
          'final_answer_with_notes',
          `action "${action}" carries final_answer and notes: notes are progress notes for tool rounds; on the final round the answer belongs in final_answer — write it again with "notes": ""`,
          { instance },
        ),
      );
    }
    if (action === 'exit') {
      const exit: Decision = { action, notes, instance };
      if (hasAnswer) exit.final_answer = finalAnswer;
      return { decision: exit, notices: [], notes };
    }
    const decision: Decision = { action, notes, instance };
    if (hasAnswer) decision.final_answer = finalAnswer;
    if (d.suggested_followups) decision.suggested_followups = d.suggested_followups.filter((s) => s.trim() !== '');
    return { decision, notices: [], notes };
  }

  const warnings: Notice[] = [];
  if (finalAnswer !== undefined && finalAnswer.trim() !== '') {
    if (!opts.suppressToolCallAnswer) {
      return fail(
        notice(
          'final_answer_with_tool_call',
          'action "call_tool" must not carry a final_answer; answer with action "complete" after the tool ran',
          {
            instance,
          },
        ),
      );
    }
    warnings.push(
      notice(
        'final_answer_with_tool_call',
        'action "call_tool" carried a final_answer: the tool runs, the final_answer text was dropped and not shown; answer with action "complete" once the tool result is visible',
        {
          instance,
          severity: 'warning',
          details: { suppressed_field: 'final_answer', suppressed_text_symbols: finalAnswer.length },
        },
      ),
    );
  }
  const call = d.tool_call;
  const toolId = isRecord(call) ? call.tool_id : undefined;
  if (typeof toolId !== 'string' || toolId.trim() === '') {
    return fail(
      notice('missing_tool_id', 'action "call_tool" needs tool_call.tool_id naming one of the listed tools', {
        instance,
        details: { known_tools: registry.ids() },
      }),
    );
  }
  if (!registry.has(toolId)) {
    return fail(
      notice('unknown_tool', `unknown tool ${JSON.stringify(toolId)}; available tools: ${registry.ids().join(', ')}`, {
        instance,
        details: { tool_id: toolId, known_tools: registry.ids() },
      }),
    );
  }
  const rawParams = isRecord(call) && call.params !== undefined ? call.params : {};
  if (!isRecord(rawParams)) {
    return fail(
      notice('invalid_params', `${toolId}: tool_call.params must be a JSON object`, {
        instance,
        details: { tool_id: toolId, issues: [{ path: '(params)', message: 'expected an object' }] },
      }),
    );
  }
  // Order first (a protocol rule streaming recorders rely on), then the values; both reported.
  const problems: Notice[] = [];
  const order = registry.get(toolId).paramOrder;
  const orderNotice = order ? checkParamOrder(toolId, rawParams, order, instance) : undefined;
  if (orderNotice) problems.push(orderNotice);
  const parsed = registry.parseParams(toolId, rawParams);
  if (!parsed.ok) {
    problems.push(
      notice(
        'invalid_params',
        `${toolId}: invalid params: ${parsed.issues.map((i) => `${i.path || '(params)'}: ${i.message}`).join('; ')}`,
        {
          instance,
          details: { tool_id: toolId, issues: parsed.issues },
        },
      ),
    );
  }
  if (!parsed.ok || problems.length > 0) return { notices: problems, notes };
  return {
    decision: { action, notes, instance, tool_call: { tool_id: toolId, params: parsed.params } },
    notices: warnings,
    notes,
  };
}
