/**
 * interpretDecision: raw decision response → validated actions + side channels, or the
 * notices that explain why the round failed. Pure and deterministic.
 */
import { parseChannels } from '../channels';
import type { ToolRegistry } from '../tools/registry';
import {
  ANSWER_CHANNEL,
  CODE_CHANNEL,
  DECISION_CHANNEL,
  DECISION_CHANNEL_SPECS,
  FOLLOWUP_CHANNEL,
  FollowupChannelSchema,
  SUMMARY_CHANNEL,
  THINKING_CHANNEL,
  type Decision,
} from './schema';
import { notice, type Notice } from './notice';
import { parseDecisionJson, stripJsonFence, validateDecisionObject } from './validate';
import { selectBundle, type MultiActionMode } from './multi-action';

/** What interpretation needs from a channel parse (parseChannels output or a finished ChannelStreamParser). */
export interface ChannelParse {
  results: Readonly<Record<string, { instances: readonly string[] } | undefined>>;
  /** Text before the first channel tag. */
  preamble: string;
  /** Channel instances in the order they opened. */
  order: ReadonlyArray<{ channel: string; instance: number }>;
}

export interface InterpretOptions {
  /** `safe_fanout` accepts up to 2 ReactDecisionOutV2 instances per round. Default `off`. */
  multiAction?: MultiActionMode;
}

export type DecisionInterpretation =
  | {
      ok: true;
      /** Accepted actions, to run sequentially in this order. */
      actions: Decision[];
      /** User-facing answer (complete/exit): `<channel:answer>` when present, else `final_answer`. */
      answer?: string;
      followups?: string[];
      /** Hidden working summary (complete/exit only). */
      summary?: string;
      /** Raw code for the exec tool. */
      code?: string;
      thinking: string;
      /** Notes of the accepted actions, in order (for react.notes). */
      notes: string;
      /** Warnings and rejected extra actions; the round still proceeds. */
      notices: Notice[];
    }
  | { ok: false; notices: Notice[]; notes?: string; raw: string };

/** Parses and interprets a complete decision response. */
export function interpretDecision(
  rawText: string,
  registry: ToolRegistry,
  opts: InterpretOptions = {},
): DecisionInterpretation {
  return interpretChannels(parseChannels(rawText, [...DECISION_CHANNEL_SPECS]), rawText, registry, opts);
}

function instancesOf(parse: ChannelParse, channel: string): readonly string[] {
  return parse.results[channel]?.instances ?? [];
}

function joined(parse: ChannelParse, channel: string): string | undefined {
  const parts = instancesOf(parse, channel)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return parts.length ? parts.join('\n\n') : undefined;
}

/**
 * Protocol-shape checks: thinking first, no text before it, both protocol channels present.
 * Usable on a partial parse too (see `decisionPrefixViolation`).
 */
export function checkProtocolShape(parse: ChannelParse): Notice[] {
  const out: Notice[] = [];
  const first = parse.order[0];
  if (first && parse.preamble.trim() !== '') {
    out.push(
      notice(
        'decision_preamble_before_first_channel',
        `found text before <channel:${THINKING_CHANNEL}>; start the response with the thinking channel`,
        {
          details: { preamble: parse.preamble.trim().slice(0, 200) },
        },
      ),
    );
  }
  if (first && first.channel !== THINKING_CHANNEL) {
    out.push(
      notice(
        'decision_first_channel_not_thinking',
        `the first channel must be <channel:${THINKING_CHANNEL}>, got <channel:${first.channel}>`,
        {
          details: { first_channel: first.channel },
        },
      ),
    );
  }
  const missing = [THINKING_CHANNEL, DECISION_CHANNEL].filter((c) => instancesOf(parse, c).length === 0);
  if (missing.length) {
    out.push(
      notice(
        'decision_missing_protocol_channels',
        `missing ${missing.map((c) => `<channel:${c}>`).join(' and ')}; every response needs <channel:${THINKING_CHANNEL}> then <channel:${DECISION_CHANNEL}> with one JSON object`,
        { details: { missing } },
      ),
    );
  }
  return out;
}

/**
 * For a live stream: the first prefix violation that is already certain (text before the
 * first channel, or a first channel other than thinking), so the caller can stop early.
 */
export function decisionPrefixViolation(partial: Pick<ChannelParse, 'preamble' | 'order'>): Notice | undefined {
  return checkProtocolShape({
    ...partial,
    results: { [THINKING_CHANNEL]: { instances: [''] }, [DECISION_CHANNEL]: { instances: [''] } },
  })[0];
}

/** Interprets an existing channel parse (e.g. the one the live stream already produced). */
export function interpretChannels(
  parse: ChannelParse,
  rawText: string,
  registry: ToolRegistry,
  opts: InterpretOptions = {},
): DecisionInterpretation {
  const shape = checkProtocolShape(parse);
  const notices: Notice[] = [...shape];
  const valid: Decision[] = [];
  let firstNotes: string | undefined;
  const hasAnswerChannel = joined(parse, ANSWER_CHANNEL) !== undefined;

  instancesOf(parse, DECISION_CHANNEL).forEach((text, instance) => {
    const json = parseDecisionJson(text, instance);
    if (!json.ok) {
      notices.push(json.notice);
      return;
    }
    const v = validateDecisionObject(json.value, instance, registry, {
      suppressToolCallAnswer: opts.multiAction === 'safe_fanout',
    });
    if (firstNotes === undefined && v.notes) firstNotes = v.notes;
    notices.push(...v.notices);
    if (v.decision?.action === 'complete' && v.decision.final_answer === undefined && !hasAnswerChannel) {
      notices.push(
        notice(
          'final_answer_required',
          `action "complete" needs the answer: write <channel:${ANSWER_CHANNEL}> or a non-empty final_answer`,
          { instance },
        ),
      );
    } else if (v.decision) valid.push(v.decision);
  });

  if (shape.length > 0 || valid.length === 0) {
    const failed: DecisionInterpretation = { ok: false, notices, raw: rawText };
    if (firstNotes !== undefined) failed.notes = firstNotes;
    return failed;
  }

  const bundle = selectBundle(valid, registry, opts.multiAction ?? 'off');
  notices.push(...bundle.notices);
  const actions = bundle.accepted;
  const final = actions.find((a) => a.action !== 'call_tool');

  const result: DecisionInterpretation = {
    ok: true,
    actions,
    thinking: joined(parse, THINKING_CHANNEL) ?? '',
    notes: actions
      .map((a) => a.notes.trim())
      .filter((n) => n !== '')
      .join('\n'),
    notices,
  };

  const code = instancesOf(parse, CODE_CHANNEL).find((c) => c.trim() !== '');
  if (code !== undefined) {
    const usesCode = actions.some(
      (a) => a.action === 'call_tool' && registry.get(a.tool_call.tool_id).consumesCode === true,
    );
    if (usesCode) result.code = code;
    else if (valid.length === 1) {
      // One action that does not run code: the code was meant for something else; nothing runs.
      const only = valid[0]!;
      const what = only.action === 'call_tool' ? only.tool_call.tool_id : only.action;
      notices.push(
        notice(
          'code_channel_without_single_exec',
          `<channel:code> holds code but the action is ${what}, which does not run code; no action ran: clear <channel:code>, or call a tool that executes code`,
          {
            details: {
              action: only.action,
              ...(only.action === 'call_tool' ? { tool_id: only.tool_call.tool_id } : {}),
            },
          },
        ),
      );
      const failed: DecisionInterpretation = { ok: false, notices, raw: rawText };
      if (firstNotes !== undefined) failed.notes = firstNotes;
      return failed;
    } else {
      notices.push(
        notice(
          'code_channel_without_single_exec',
          '<channel:code> was ignored: no action in this round runs a tool that consumes code',
          {
            severity: 'warning',
          },
        ),
      );
    }
  }

  const answerChannel = joined(parse, ANSWER_CHANNEL);
  const summary = joined(parse, SUMMARY_CHANNEL);
  if (final) {
    const answer = answerChannel ?? final.final_answer;
    if (answer !== undefined) result.answer = answer;
    const followups =
      readFollowups(parse, notices) ?? (final.action === 'complete' ? final.suggested_followups : undefined);
    if (followups !== undefined) result.followups = followups;
    if (summary !== undefined) result.summary = summary;
  } else {
    if (answerChannel !== undefined) {
      notices.push(
        notice(
          'answer_channel_without_completion',
          '<channel:answer> was ignored: write the answer only with action "complete" or "exit"',
          {
            severity: 'warning',
          },
        ),
      );
    }
    if (summary !== undefined) {
      notices.push(
        notice(
          'summary_without_completion',
          '<channel:summary> was ignored: write the summary only with action "complete" or "exit"',
          {
            severity: 'warning',
          },
        ),
      );
    }
  }
  return result;
}

function readFollowups(parse: ChannelParse, notices: Notice[]): string[] | undefined {
  const text = instancesOf(parse, FOLLOWUP_CHANNEL).find((t) => t.trim() !== '');
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(stripJsonFence(text));
  } catch (err) {
    notices.push(
      notice(
        'invalid_followup_channel',
        `<channel:followup> must hold {"followups": [...]}: ${err instanceof Error ? err.message : String(err)}`,
        {
          severity: 'warning',
        },
      ),
    );
    return undefined;
  }
  const parsed = FollowupChannelSchema.safeParse(value);
  if (!parsed.success) {
    notices.push(
      notice('invalid_followup_channel', '<channel:followup> must hold {"followups": ["...", ...]}', {
        severity: 'warning',
      }),
    );
    return undefined;
  }
  return parsed.data.followups.map((f) => f.trim()).filter((f) => f !== '');
}
