/**
 * The canvas a react.write call streams while the model is still writing the call's arguments
 * (native tool calling: Anthropic `input_json_delta`, OpenAI tool-call `arguments` deltas). The
 * arguments JSON is read piece by piece with the composite JSON streamer (core/channels/composite.ts:
 * linear in the input, top-level string values streamed as they arrive — a partial-JSON parser
 * would re-parse the whole prefix per delta); once `path` and `channel` are known (the tool's
 * parameter order is path → channel → content) the `content` text goes out as `delta` events of
 * the canvas channel, the same shape the tool's own stream has (react.write's streamFile: `path`,
 * `mime`, `target`, `index` from 0), and a JSON file's top-level attributes go out as `attribute`
 * events as each completes (the composite canvas of the call's path, `instance` = canvasInstance).
 *
 * Idempotent on a retried round: every write starts at `index` 0 (a live client starts the canvas
 * over) and its first attribute carries `first: true` (the composite fold starts over), so a second
 * attempt replaces what the first one streamed instead of adding to it. Pure.
 */
import { CompositeJsonStreamer } from '../channels/composite';
import type { StreamEventBody } from './events';

/** Where a react.write path lands: its logical path (`fi:<turn>.files/<rel>`) and MIME. */
export interface WriteCanvasTarget {
  path: string;
  mime: string;
}

export type WriteCanvasEvent = Extract<StreamEventBody, { kind: 'delta' | 'attribute' }>;

/** The write channels whose content shows as a canvas (react.write's `internal` stays silent). */
const SHOWN = new Set(['canvas', 'timeline_text']);

/**
 * The composite instance of the canvas a react.write of `path` streams (FNV-1a, 31 bits, never 0):
 * the same live, in the stored fold and on reload, without a counter the round would have to keep.
 */
export function canvasInstance(path: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < path.length; i++) {
    h ^= path.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 1) % 0x7fffffff || 1;
}

export class WriteCanvasStream {
  private readonly args = new CompositeJsonStreamer();
  private path?: string;
  private channel?: string;
  /** Content read before `path` and `channel` decided whether it shows. */
  private held = '';
  private closed = false;
  /** Set once shown: the target; `null` once decided silent. */
  private target?: WriteCanvasTarget | null;
  private index = 0;
  private content?: CompositeJsonStreamer;
  private attributes = 0;

  /**
   * @param resolve the target of a path, or undefined for one the tool would refuse (nothing shows)
   * @param round the round that streams the call (carried on every event)
   */
  constructor(
    private readonly resolve: (path: string) => WriteCanvasTarget | undefined,
    private readonly round: number,
  ) {}

  /** The next piece of the arguments JSON; the events it completes. */
  push(json: string): WriteCanvasEvent[] {
    const out: WriteCanvasEvent[] = [];
    for (const o of this.args.push(json)) {
      if (o.kind === 'attribute' && o.key === 'path' && typeof o.value === 'string') this.path = o.value;
      else if (o.kind === 'attribute' && o.key === 'channel' && typeof o.value === 'string') this.channel = o.value;
      else if (o.key === 'content' && o.kind === 'attribute-delta') this.held += o.text;
      else if (o.key === 'content' && o.kind === 'attribute') this.closed = true;
      else continue;
      this.decide();
      this.flush(out);
    }
    return out;
  }

  /** The arguments ended (the call is complete or the stream stopped): nothing more will come. */
  end(): WriteCanvasEvent[] {
    const out: WriteCanvasEvent[] = [];
    for (const o of this.args.finish()) if (o.kind === 'attribute' && o.key === 'content') this.closed = true;
    this.flush(out);
    return out;
  }

  private decide(): void {
    if (this.target !== undefined || this.path === undefined || this.channel === undefined) return;
    this.target = SHOWN.has(this.channel) ? (this.resolve(this.path) ?? null) : null;
    if (this.target && /json/.test(this.target.mime)) this.content = new CompositeJsonStreamer();
  }

  private flush(out: WriteCanvasEvent[]): void {
    const t = this.target;
    if (!t || (this.held === '' && !this.closed)) return;
    const text = this.held;
    this.held = '';
    const completed = this.closed;
    out.push({
      kind: 'delta',
      channel: 'canvas',
      payload: {
        text,
        round: this.round,
        target: this.channel,
        path: t.path,
        mime: t.mime,
        index: this.index++,
        ...(completed ? { completed: true } : {}),
      },
    });
    if (this.content) {
      const parts = [...this.content.push(text), ...(completed ? this.content.finish() : [])];
      for (const o of parts)
        if (o.kind === 'attribute')
          out.push({
            kind: 'attribute',
            channel: 'canvas',
            instance: canvasInstance(t.path),
            payload: {
              key: o.key,
              value: o.value,
              round: this.round,
              path: t.path,
              ...(this.attributes++ === 0 ? { first: true } : {}),
            },
          });
    }
    // Streamed once: the completed canvas sends nothing more.
    if (completed) this.target = null;
  }
}
