/**
 * AG-UI 1.0 as an encoding of a turn's stream (issue 43): one pure, stateful mapping from the
 * typed stream events (core/stream/events.ts) of ONE turn to AG-UI events (`@ag-ui/core`). The
 * gateway's `POST /v1/ag-ui` feeds it the turn's events from the sequence-numbered stream log —
 * never a second pipeline. Because the state is rebuilt from the log, a reconnect or a resumed run
 * replays the turn's earlier events silently (their output dropped) and then calls `begin` for its
 * own run: RUN_STARTED, the state snapshot and whatever is still open (the round's step, the
 * answer's message), so the client's verifier accepts the continuation and nothing is repeated.
 *
 * - a round is a step (`round <n>`), opened by its first event, closed by the next round or the end;
 * - the answer is a text message (start, content per delta, end); an answer published whole (no
 *   deltas) is start, one content, end; a retried attempt ends the partial message, the next
 *   attempt's text is a new message;
 * - a tool call is TOOL_CALL_START/ARGS/END (the params as JSON) and its TOOL_CALL_RESULT;
 * - plans and canvases are the run's state `{plans: {<planId>: view}, canvases: {<key>: canvas}}`,
 *   changed by STATE_DELTA (JSON Patch) and sent whole by STATE_SNAPSHOT when a run begins;
 * - an approval request ends the run with an `interrupt` outcome (the interrupt's id is the call
 *   id), answered by the next run's `resume`;
 * - `done` ends the run (success, result: the answer; a cancelled turn: the `cancelled` outcome),
 *   `turn.failed` with RUN_ERROR.
 * Other kinds (usage, thinking text, exec, compaction, budget, inject, model errors) carry nothing
 * AG-UI names and map to no event.
 */
import { EventType, type BaseEvent, type Interrupt, type JsonPatchOperation, type RunFinishedEvent } from '@ag-ui/core';
import type { StreamEvent } from '../../stream/events';

/** The interrupt reason of a tool call waiting for a person's approval. */
export const APPROVAL_INTERRUPT_REASON = 'tool_approval';

export interface AgUiCanvas {
  /** What the canvas shows (a file path, or `canvas-<instance>` for the model's canvas channel). */
  path?: string;
  mime?: string;
  text: string;
  attributes?: Record<string, unknown>;
  completed?: boolean;
}

export interface AgUiState {
  plans?: Record<string, unknown>;
  canvases?: Record<string, AgUiCanvas>;
}

/** How the run ended (undefined: still going). */
export type AgUiEnd = 'success' | 'interrupt' | 'cancelled' | 'error';

export interface AgUiMapper {
  /** The events a run opens with; resets the end so a resumed run continues the turn. */
  begin(run: { runId: string; timestamp?: number }): BaseEvent[];
  /** The AG-UI events of one stream event (of this mapper's turn). */
  push(e: StreamEvent): BaseEvent[];
  /** How the current run ended, if it did. */
  readonly end: AgUiEnd | undefined;
  /** Whether the turn itself is over (done or failed): no later event can come. */
  readonly turnOver: boolean;
  /** The terminal event of a turn that is over, for a run that begins after it. */
  terminal(): BaseEvent[];
  readonly state: AgUiState;
}

const pointer = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

export function agUiMapper(opts: {
  threadId: string;
  turnId: string;
  /** Calls this run's input already answered (resume): their approval requests end no run. */
  answered?: readonly string[];
}): AgUiMapper {
  const { threadId, turnId } = opts;
  const answered = new Set(opts.answered ?? []);
  let runId = '';
  let end: AgUiEnd | undefined;
  let terminalEvent: BaseEvent | undefined;
  let round: number | undefined;
  let stepOpen = false;
  let text: { id: string; streamed: boolean } | undefined;
  let messages = 0;
  const state: AgUiState = {};

  const stepName = (r: number) => `round ${r}`;
  const closeText = (ts: number | undefined): BaseEvent[] => {
    if (!text) return [];
    const out = [{ type: EventType.TEXT_MESSAGE_END, messageId: text.id, timestamp: ts } as BaseEvent];
    text = undefined;
    return out;
  };
  const closeStep = (ts: number | undefined): BaseEvent[] => {
    if (!stepOpen || round === undefined) return [];
    stepOpen = false;
    return [{ type: EventType.STEP_FINISHED, stepName: stepName(round), timestamp: ts } as BaseEvent];
  };
  /** Opens round `r`'s step (closing the previous round's) when the event belongs to a new round. */
  const enterRound = (r: number | undefined, ts: number | undefined): BaseEvent[] => {
    if (r === undefined || (r === round && stepOpen)) return [];
    if (r === round && !stepOpen) {
      stepOpen = true;
      return [{ type: EventType.STEP_STARTED, stepName: stepName(r), timestamp: ts } as BaseEvent];
    }
    const out = [...closeText(ts), ...closeStep(ts)];
    round = r;
    stepOpen = true;
    out.push({ type: EventType.STEP_STARTED, stepName: stepName(r), timestamp: ts } as BaseEvent);
    return out;
  };
  const openText = (ts: number | undefined): BaseEvent[] => {
    if (text) return [];
    text = { id: `${turnId}:answer:${++messages}`, streamed: false };
    return [{ type: EventType.TEXT_MESSAGE_START, messageId: text.id, role: 'assistant', timestamp: ts } as BaseEvent];
  };
  const finish = (ts: number | undefined, how: AgUiEnd, ev: Omit<BaseEvent, 'type'> & { type: EventType }) => {
    const out = [...closeText(ts), ...closeStep(ts), ev as BaseEvent];
    end = how;
    return out;
  };
  const delta = (ops: JsonPatchOperation[], ts: number | undefined): BaseEvent[] =>
    ops.length ? [{ type: EventType.STATE_DELTA, delta: ops, timestamp: ts } as BaseEvent] : [];

  const setPlan = (planId: string, view: unknown, ts: number | undefined): BaseEvent[] => {
    if (!state.plans) {
      state.plans = { [planId]: view };
      return delta([{ op: 'add', path: '/plans', value: { [planId]: view } }], ts);
    }
    state.plans[planId] = view;
    return delta([{ op: 'add', path: `/plans/${pointer(planId)}`, value: view }], ts);
  };
  const canvasOps = (key: string, change: (c: AgUiCanvas) => JsonPatchOperation[], init: AgUiCanvas) => {
    const base = `/canvases/${pointer(key)}`;
    if (!state.canvases) {
      state.canvases = { [key]: init };
      return [{ op: 'add', path: '/canvases', value: { [key]: init } }] as JsonPatchOperation[];
    }
    const existing = state.canvases[key];
    if (!existing) {
      state.canvases[key] = init;
      return [{ op: 'add', path: base, value: init }] as JsonPatchOperation[];
    }
    return change(existing).map((o) => ({ ...o, path: `${base}${o.path}` }));
  };

  function map(e: StreamEvent): BaseEvent[] {
    const ts = Number.isFinite(Date.parse(e.ts)) ? Date.parse(e.ts) : undefined;
    switch (e.kind) {
      case 'phase':
        if (e.payload.phase === 'turn.failed') {
          const ev = { type: EventType.RUN_ERROR, message: e.payload.error, code: 'turn_failed', timestamp: ts };
          terminalEvent = ev as BaseEvent;
          return finish(ts, 'error', ev);
        }
        return [];
      case 'step': {
        const p = e.payload;
        switch (p.phase) {
          case 'thinking.start':
          case 'thinking.done':
          case 'synthesis.start':
            return enterRound(p.round, ts);
          case 'iteration.start': {
            const callId = String(p.callId);
            return [
              ...enterRound(p.round, ts),
              ...closeText(ts),
              { type: EventType.TOOL_CALL_START, toolCallId: callId, toolCallName: String(p.tool), timestamp: ts },
              { type: EventType.TOOL_CALL_ARGS, toolCallId: callId, delta: JSON.stringify(p.params ?? {}) },
              { type: EventType.TOOL_CALL_END, toolCallId: callId, timestamp: ts },
            ] as BaseEvent[];
          }
          case 'iteration.done': {
            const callId = String(p.callId);
            const content = typeof p.observation === 'string' ? p.observation : '';
            return [
              {
                type: EventType.TOOL_CALL_RESULT,
                messageId: `${callId}:result`,
                toolCallId: callId,
                content,
                role: 'tool',
                timestamp: ts,
              } as BaseEvent,
            ];
          }
          case 'plan': {
            const plan = p.plan as { planId?: unknown } | undefined;
            if (!plan || typeof plan.planId !== 'string') return [];
            return [...enterRound(p.round, ts), ...setPlan(plan.planId, plan, ts)];
          }
          case 'invalid':
          case 'interrupted':
          case 'subscriber.error':
            return enterRound(p.round, ts);
          default: {
            const never: never = p.phase;
            return never;
          }
        }
      }
      case 'delta': {
        const r = enterRound(e.payload.round, ts);
        if (e.channel === 'answer') {
          if (e.payload.text === '') return r;
          const out = [...r, ...openText(ts)];
          text!.streamed = true;
          out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: text!.id, delta: e.payload.text } as BaseEvent);
          return out;
        }
        if (e.channel === 'canvas') {
          const p = e.payload as { text: string; path?: unknown; mime?: unknown; completed?: unknown };
          const key = typeof p.path === 'string' ? p.path : `canvas-${e.instance ?? 0}`;
          const init: AgUiCanvas = {
            ...(typeof p.path === 'string' ? { path: p.path } : {}),
            ...(typeof p.mime === 'string' ? { mime: p.mime } : {}),
            text: p.text,
            ...(p.completed === true ? { completed: true } : {}),
          };
          const ops = canvasOps(
            key,
            (c) => {
              c.text += p.text;
              const o: JsonPatchOperation[] = [{ op: 'replace', path: '/text', value: c.text }];
              if (p.completed === true && !c.completed) {
                c.completed = true;
                o.push({ op: 'add', path: '/completed', value: true });
              }
              return o;
            },
            init,
          );
          return [...r, ...delta(ops, ts)];
        }
        return r;
      }
      case 'attribute': {
        if (e.channel !== 'canvas') return [];
        const p = e.payload as { key: string; value: unknown; path?: unknown; round?: number };
        const key = typeof p.path === 'string' ? p.path : `canvas-${e.instance ?? 0}`;
        const init: AgUiCanvas = {
          ...(typeof p.path === 'string' ? { path: p.path } : {}),
          text: '',
          attributes: { [p.key]: p.value },
        };
        const ops = canvasOps(
          key,
          (c) => {
            if (!c.attributes) {
              c.attributes = { [p.key]: p.value };
              return [{ op: 'add', path: '/attributes', value: { [p.key]: p.value } }];
            }
            c.attributes[p.key] = p.value;
            return [{ op: 'add', path: `/attributes/${pointer(p.key)}`, value: p.value }];
          },
          init,
        );
        return [...enterRound(p.round, ts), ...delta(ops, ts)];
      }
      case 'answer': {
        const r = enterRound(e.payload.round, ts);
        if (e.payload.phase === 'start') return [...r, ...openText(ts)];
        if (e.payload.phase === 'discarded') return [...r, ...closeText(ts)];
        // done: the whole answer; sent as one content when no delta carried it.
        const out = [...r, ...openText(ts)];
        if (!text!.streamed && e.payload.text)
          out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: text!.id, delta: e.payload.text } as BaseEvent);
        return [...out, ...closeText(ts)];
      }
      case 'retry':
        // The earlier attempt's partial answer stays as it was; the new attempt's is a new message.
        return closeText(ts);
      case 'approval': {
        if (e.payload.phase !== 'requested' || answered.has(e.payload.callId)) return [];
        const p = e.payload as typeof e.payload & { params?: unknown; reason?: unknown; expiresAt?: unknown };
        const interrupt: Interrupt = {
          id: p.callId,
          reason: APPROVAL_INTERRUPT_REASON,
          toolCallId: p.callId,
          message: `tool call ${p.tool} waits for approval${typeof p.reason === 'string' && p.reason ? `: ${p.reason}` : ''}`,
          ...(typeof p.expiresAt === 'string' ? { expiresAt: p.expiresAt } : {}),
          responseSchema: APPROVAL_RESPONSE_SCHEMA,
          metadata: { tool: p.tool, params: p.params ?? {} },
        };
        const ev: RunFinishedEvent = {
          type: EventType.RUN_FINISHED,
          threadId,
          runId,
          outcome: { type: 'interrupt', interrupts: [interrupt] },
          ...(ts !== undefined ? { timestamp: ts } : {}),
        };
        return finish(ts, 'interrupt', ev);
      }
      case 'done': {
        const out = text || e.payload.answer === '' ? [] : answerWhole(e.payload.answer, ts);
        // A turn someone cancelled is AG-UI's cancelled outcome: stopped, not failed, nothing waited for.
        const cancelled = e.payload.completionPath === 'cancelled';
        const ev = {
          type: EventType.RUN_FINISHED,
          threadId,
          runId,
          outcome: { type: cancelled ? 'cancelled' : 'success' },
          result: { answer: e.payload.answer, completionPath: e.payload.completionPath, turnId: e.payload.turnId },
          timestamp: ts,
        };
        terminalEvent = ev as BaseEvent;
        return [...out, ...finish(ts, cancelled ? 'cancelled' : 'success', ev)];
      }
      case 'usage':
      case 'inject':
      case 'model_error':
      case 'compact':
      case 'exec':
      case 'budget':
        return [];
      default: {
        const never: never = e;
        return never;
      }
    }
  }

  /** The answer as one message when nothing streamed it: only if no message carried it yet. */
  const answerWhole = (answer: string, ts: number | undefined): BaseEvent[] => {
    if (messages > 0) return [];
    const out = openText(ts);
    out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: text!.id, delta: answer } as BaseEvent);
    return out;
  };

  return {
    begin({ runId: id, timestamp }) {
      runId = id;
      end = undefined;
      const out: BaseEvent[] = [{ type: EventType.RUN_STARTED, threadId, runId, timestamp } as BaseEvent];
      if (state.plans || state.canvases)
        out.push({ type: EventType.STATE_SNAPSHOT, snapshot: structuredClone(state), timestamp } as BaseEvent);
      if (terminalEvent) return out;
      // What the earlier connection or run left open continues here.
      if (round !== undefined) {
        stepOpen = true;
        out.push({ type: EventType.STEP_STARTED, stepName: stepName(round), timestamp } as BaseEvent);
      }
      if (text)
        out.push({ type: EventType.TEXT_MESSAGE_START, messageId: text.id, role: 'assistant', timestamp } as BaseEvent);
      return out;
    },
    push(e) {
      if (e.turnId !== undefined && e.turnId !== turnId) return [];
      if (terminalEvent) return [];
      return map(e);
    },
    get end() {
      return end;
    },
    get turnOver() {
      return terminalEvent !== undefined;
    },
    terminal() {
      if (!terminalEvent) return [];
      const outcome = (terminalEvent as { outcome?: { type?: string } }).outcome?.type;
      end = terminalEvent.type === EventType.RUN_ERROR ? 'error' : outcome === 'cancelled' ? 'cancelled' : 'success';
      return [{ ...terminalEvent, ...(terminalEvent.type === EventType.RUN_FINISHED ? { runId } : {}) } as BaseEvent];
    },
    state,
  };
}

/** What a resume entry's payload may say about a waiting tool call (also the interrupt's responseSchema). */
export const APPROVAL_RESPONSE_SCHEMA = {
  type: 'object',
  properties: {
    decision: { enum: ['approve', 'deny', 'edit'] },
    reason: { type: 'string' },
    params: { type: 'object' },
  },
  required: ['decision'],
};
