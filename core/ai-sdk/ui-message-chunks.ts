/**
 * One turn's stream events (core/stream/events.ts) as the Vercel AI SDK's UI message stream
 * (`ai` v7's `UIMessageChunk`, the protocol `useChat` / `DefaultChatTransport` read): the single
 * mapping behind `POST /v1/ai-sdk/chat` and its resume route, pure and deterministic — the same
 * events always give the same chunks (part ids come from the events' offsets), so a resumed
 * stream replayed from the log equals the one the client lost.
 *
 * event                               chunks
 * first event of the turn             start {messageId: `msg_<turnId>`}
 * a round's first event               finish-step (of the previous round), start-step
 * delta thinking                      reasoning-start (once) + reasoning-delta; step thinking.done: reasoning-end
 * delta answer                        text-start (once) + text-delta; answer done: text-end (the whole text
 *                                     when nothing streamed)
 * step iteration.start                tool-input-start / -delta / -available (dynamic tools: our tools are the server's)
 * step iteration.done                 tool-output-available {output: the observation preview} or tool-output-error
 * delta/attribute canvas              data-canvas {id: its path}: {path, mime, text, attributes?, completed}
 * step plan                           data-plan {id: planId}: the plan view
 * approval requested / decided        tool-approval-request / tool-approval-response (+ tool-output-denied on a
 *                                     denial); an approval of a call this turn never started (a subagent's): data-approval
 *                                     — the stream then pauses (`pause()`: finish-step, finish 'tool-calls') until the
 *                                     next request answers it (the gateway decides that, ai-sdk-stream.ts)
 * inject (a followup or steer)        steering-message {id: its message id, parts: [text]}: before the step that takes it
 * retry of the current round          reset-step (the round streams again; events of earlier attempts are dropped)
 * done                                file chunks for the produced files, finish-step, finish {messageMetadata}
 * phase turn.failed                   error {errorText}, finish-step, finish {finishReason: 'error'}
 * usage, compact, exec,              nothing: no UI message part says it (the gateway's own stream has them)
 * budget, model_error, other steps
 */
import type { UIMessage, UIMessageChunk } from 'ai' with { 'resolution-mode': 'import' };
import type { ProducedFile, StreamEvent } from '../stream/events';
import { unknownKind } from '../stream/events';

/** A canvas as it stands: a file react.write streams (by path) or a composite JSON instance. */
export interface CanvasData {
  path: string;
  mime: string;
  text: string;
  attributes?: Record<string, unknown>;
  completed: boolean;
}

/** The data parts this stream sends (`data-<name>`). */
export type DreactDataTypes = {
  canvas: CanvasData;
  plan: Record<string, unknown>;
  approval: Record<string, unknown>;
};

export interface DreactMessageMetadata {
  turnId: string;
  completionPath?: string;
  iterations?: number;
  usage?: Record<string, unknown>;
}

export type DreactUIMessage = UIMessage<DreactMessageMetadata, DreactDataTypes>;
export type DreactUIChunk = UIMessageChunk<DreactMessageMetadata, DreactDataTypes>;

export interface UiMapperOptions {
  /** The turn this stream tells; other turns' events are skipped. */
  turnId: string;
  /** A produced file's URL (its `url` is relative to the conversation's resource). */
  fileUrl: (f: ProducedFile) => string;
  /** A failed turn's error as a client may read it. */
  publicError?: (error: string) => string;
}

type StepKey = string;

const roundKey = (round: number | undefined): StepKey | undefined =>
  round === undefined ? undefined : `round-${round}`;

/**
 * Maps one turn's events to UI message chunks, in order. Keep one per stream; `push` each event
 * of the conversation's log (offset order), `finished` says the turn ended.
 */
export class UiMessageMapper {
  private started = false;
  private step: StepKey | undefined;
  private text: string | undefined;
  private reasoning: string | undefined;
  /** Whether the current step streamed text (answer `done` then only closes it). */
  private stepText = false;
  private anyText = false;
  private readonly tools = new Map<string, string>();
  private readonly denied = new Set<string>();
  private readonly canvases = new Map<string, CanvasData>();
  /** Calls of this turn whose approval was requested and not decided yet (in log order). */
  readonly awaiting = new Set<string>();
  /** The latest attempt of each step: events of earlier attempts are stale. */
  private readonly attempts = new Map<StepKey, number>();
  finished = false;

  constructor(private readonly opts: UiMapperOptions) {}

  push(e: StreamEvent): DreactUIChunk[] {
    if (this.finished || (e.turnId !== undefined && e.turnId !== this.opts.turnId)) return [];
    const out: DreactUIChunk[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', messageId: `msg_${this.opts.turnId}` });
    }
    const stepOf = this.stepOf(e);
    if (stepOf !== undefined && e.attempt !== undefined && e.attempt < (this.attempts.get(stepOf) ?? 0)) return out;
    if (stepOf !== undefined && stepOf !== this.step && e.kind !== 'retry') this.enterStep(stepOf, out);
    this.map(e, out);
    return out;
  }

  /** The step an event belongs to: its round, the synthesis, or none (tool results: the current one). */
  private stepOf(e: StreamEvent): StepKey | undefined {
    switch (e.kind) {
      case 'step':
        return e.payload.phase === 'synthesis.start' ? 'synthesis' : roundKey(e.payload.round);
      case 'delta':
      case 'answer':
        return roundKey(e.payload.round);
      case 'retry':
        return e.payload.phase === 'synthesis' ? 'synthesis' : roundKey(e.payload.round);
      default:
        return undefined;
    }
  }

  private enterStep(step: StepKey, out: DreactUIChunk[]): void {
    this.closeParts(out);
    if (this.step !== undefined) out.push({ type: 'finish-step' });
    out.push({ type: 'start-step' });
    this.step = step;
    this.stepText = false;
  }

  private closeParts(out: DreactUIChunk[]): void {
    if (this.reasoning) out.push({ type: 'reasoning-end', id: this.reasoning });
    if (this.text) out.push({ type: 'text-end', id: this.text });
    this.reasoning = undefined;
    this.text = undefined;
  }

  private ensureStep(out: DreactUIChunk[]): void {
    if (this.step === undefined) this.enterStep('round-0', out);
  }

  private textDelta(seq: number, delta: string, out: DreactUIChunk[]): void {
    this.ensureStep(out);
    if (this.reasoning) {
      out.push({ type: 'reasoning-end', id: this.reasoning });
      this.reasoning = undefined;
    }
    if (!this.text) {
      this.text = `text-${seq}`;
      out.push({ type: 'text-start', id: this.text });
    }
    this.stepText = true;
    this.anyText = true;
    if (delta !== '') out.push({ type: 'text-delta', id: this.text, delta });
  }

  private canvas(key: string, update: (c: CanvasData) => CanvasData, fresh: CanvasData, out: DreactUIChunk[]): void {
    this.ensureStep(out);
    const next = update(this.canvases.get(key) ?? fresh);
    this.canvases.set(key, next);
    out.push({ type: 'data-canvas', id: key, data: next });
  }

  private map(e: StreamEvent, out: DreactUIChunk[]): void {
    switch (e.kind) {
      case 'phase':
        if (e.payload.phase === 'turn.failed') {
          const error = this.opts.publicError ? this.opts.publicError(e.payload.error) : e.payload.error;
          this.end(out, { type: 'error', errorText: error }, { type: 'finish', finishReason: 'error' });
        }
        return;
      case 'delta': {
        const p = e.payload;
        if (e.channel === 'answer') this.textDelta(e.seq, p.text, out);
        else if (e.channel === 'thinking') {
          this.ensureStep(out);
          if (!this.reasoning) {
            this.reasoning = `reasoning-${e.seq}`;
            out.push({ type: 'reasoning-start', id: this.reasoning });
          }
          if (p.text !== '') out.push({ type: 'reasoning-delta', id: this.reasoning, delta: p.text });
        } else if (e.channel === 'canvas') {
          const path = typeof p.path === 'string' ? p.path : `canvas-${e.instance ?? 0}`;
          const mime = typeof p.mime === 'string' ? p.mime : 'text/markdown';
          const completed = p.completed === true;
          // Each write streams from index 0: a rewrite (or a retried round) of the same path starts over.
          this.canvas(
            path,
            (c) =>
              p.index === 0
                ? { path, mime, text: p.text, completed }
                : { ...c, text: c.text + p.text, completed: c.completed || completed },
            { path, mime, text: '', completed: false },
            out,
          );
        }
        return;
      }
      case 'attribute': {
        if (e.channel !== 'canvas') return;
        const { key, value } = e.payload;
        const path = typeof e.payload.path === 'string' ? e.payload.path : `canvas-${e.instance ?? 0}`;
        this.canvas(
          path,
          (c) => ({ ...c, attributes: { ...(e.payload.first === true ? {} : c.attributes), [key]: value } }),
          { path, mime: 'application/json', text: '', completed: false },
          out,
        );
        return;
      }
      case 'answer': {
        const p = e.payload;
        if (p.phase !== 'done') return;
        if (!this.stepText && typeof p.text === 'string' && p.text !== '') this.textDelta(e.seq, p.text, out);
        if (this.text) out.push({ type: 'text-end', id: this.text });
        this.text = undefined;
        return;
      }
      case 'step':
        this.stepEvent(e, out);
        return;
      case 'retry': {
        const step = this.stepOf(e);
        if (step === undefined) return;
        this.attempts.set(step, Math.max(this.attempts.get(step) ?? 0, e.payload.attempt));
        if (step !== this.step) return;
        // The round streams again: its parts so far go (the client drops the current step's parts).
        this.reasoning = undefined;
        this.text = undefined;
        this.stepText = false;
        out.push({ type: 'reset-step' });
        return;
      }
      case 'approval':
        this.approval(e, out);
        return;
      case 'done': {
        const d = e.payload;
        if (!this.anyText && d.answer !== '') this.textDelta(e.seq, d.answer, out);
        this.closeParts(out);
        for (const f of d.files ?? []) out.push({ type: 'file', url: this.opts.fileUrl(f), mediaType: f.mime });
        this.end(out, {
          type: 'finish',
          finishReason: 'stop',
          messageMetadata: {
            turnId: this.opts.turnId,
            completionPath: d.completionPath,
            iterations: d.iterations,
            usage: d.usage as Record<string, unknown>,
          },
        });
        return;
      }
      case 'inject':
        // The AI SDK's steering message: a user message the running turn took, before the step that took it.
        this.closeParts(out);
        out.push({
          type: 'steering-message',
          id: e.payload.messageId,
          parts: [{ type: 'text', text: e.payload.text }],
        });
        return;
      case 'usage':
      case 'compact':
      case 'exec':
      case 'budget':
      case 'model_error':
        return;
      default:
        unknownKind(e);
    }
  }

  private stepEvent(e: Extract<StreamEvent, { kind: 'step' }>, out: DreactUIChunk[]): void {
    const p = e.payload;
    switch (p.phase) {
      case 'thinking.start':
      case 'synthesis.start':
        this.ensureStep(out);
        return;
      case 'thinking.done':
        if (this.reasoning) out.push({ type: 'reasoning-end', id: this.reasoning });
        this.reasoning = undefined;
        return;
      case 'iteration.start': {
        this.ensureStep(out);
        const toolCallId = String(p.callId);
        const toolName = String(p.tool);
        const input = p.params ?? {};
        this.tools.set(toolCallId, toolName);
        const title = typeof p.summary === 'string' ? { title: p.summary } : {};
        out.push({ type: 'tool-input-start', toolCallId, toolName, dynamic: true, ...title });
        out.push({ type: 'tool-input-delta', toolCallId, inputTextDelta: JSON.stringify(input) });
        out.push({ type: 'tool-input-available', toolCallId, toolName, input, dynamic: true, ...title });
        return;
      }
      case 'iteration.done': {
        const toolCallId = String(p.callId);
        if (!this.tools.has(toolCallId) || this.denied.has(toolCallId)) return;
        const observation = typeof p.observation === 'string' ? p.observation : '';
        out.push(
          p.ok === false
            ? { type: 'tool-output-error', toolCallId, errorText: observation, dynamic: true }
            : { type: 'tool-output-available', toolCallId, output: observation, dynamic: true },
        );
        return;
      }
      case 'plan': {
        const plan = (p.plan ?? {}) as Record<string, unknown>;
        this.ensureStep(out);
        out.push({ type: 'data-plan', id: String(plan.planId ?? 'plan'), data: plan });
        return;
      }
      case 'invalid':
      case 'interrupted':
      case 'subscriber.error':
        return;
      default: {
        const unknownPhase: never = p.phase;
        throw new Error(`unhandled step phase ${String(unknownPhase)}`);
      }
    }
  }

  private approval(e: Extract<StreamEvent, { kind: 'approval' }>, out: DreactUIChunk[]): void {
    const p = e.payload;
    const toolCallId = p.callId;
    if (!this.tools.has(toolCallId)) {
      // A subagent's call (its approvals reach the parent's stream): no tool part of ours to attach it to.
      this.ensureStep(out);
      out.push({ type: 'data-approval', id: toolCallId, data: { ...p } });
      return;
    }
    const reason = typeof p.reason === 'string' && p.reason !== '' ? { reason: p.reason } : {};
    if (p.phase === 'requested') {
      this.awaiting.add(toolCallId);
      out.push({ type: 'tool-approval-request', approvalId: toolCallId, toolCallId, ...reason });
      return;
    }
    this.awaiting.delete(toolCallId);
    const approved = p.decision === 'approve' || p.decision === 'edit';
    out.push({ type: 'tool-approval-response', approvalId: toolCallId, approved, ...reason });
    if (!approved) {
      this.denied.add(toolCallId);
      out.push({ type: 'tool-output-denied', toolCallId });
    }
  }

  /**
   * Ends this response while the turn waits for approvals (the AI SDK's own shape: the step ends,
   * `finish` with 'tool-calls'); the client answers with `addToolApprovalResponse` and the next
   * request continues the same message. The next event opens a new step.
   */
  pause(): DreactUIChunk[] {
    const out: DreactUIChunk[] = [];
    this.closeParts(out);
    if (this.step !== undefined) out.push({ type: 'finish-step' });
    this.step = undefined;
    out.push({ type: 'finish', finishReason: 'tool-calls' });
    return out;
  }

  private end(out: DreactUIChunk[], ...last: DreactUIChunk[]): void {
    this.closeParts(out);
    if (this.step !== undefined) out.push({ type: 'finish-step' });
    out.push(...last);
    this.finished = true;
  }
}
