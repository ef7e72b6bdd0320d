/** Test helpers: feed a text in given chunk sizes and normalise the outcome for comparison. */
import {
  ChannelStreamParser,
  type ChannelEvent,
  type ChannelParserOptions,
  type ChannelSpec,
  type ChannelSubscribers,
} from '../../../core/channels';

export const PROTOCOL_SPECS: ChannelSpec[] = [
  { name: 'thinking', format: 'markdown', marker: 'thinking' },
  { name: 'ReactDecisionOutV2', format: 'json', marker: 'decision', composite: true },
  { name: 'code', format: 'code', marker: 'subsystem' },
  { name: 'answer', format: 'markdown', citations: true },
  { name: 'followup', format: 'json', marker: 'followup' },
  { name: 'summary', format: 'markdown', marker: 'subsystem' },
  { name: 'page', format: 'html', citations: true, marker: 'canvas-html' },
  { name: 'notes', format: 'text', marker: 'notes' },
];

export const SOURCES = [
  { sid: 1, title: 'Alpha | report', url: 'https://alpha.example/r' },
  { sid: 2, title: 'Beta [draft]', url: 'https://beta.example' },
  { sid: 3, title: 'Gamma', url: 'https://gamma.example/a b' },
  { sid: 5, title: 'No link' },
];

/** Split `text` into chunks: a fixed size, or a list of sizes cycled. */
export function chunk(text: string, sizes: number | number[]): string[] {
  const list = typeof sizes === 'number' ? [sizes] : sizes;
  const out: string[] = [];
  let i = 0;
  let k = 0;
  while (i < text.length) {
    const n = Math.max(1, list[k % list.length]!);
    out.push(text.slice(i, i + n));
    i += n;
    k++;
  }
  return out;
}

export interface Outcome {
  events: ChannelEvent[];
  /** Structural events (open/complete/attribute/subscriber-error) in order. */
  structure: string[];
  /** Concatenated delta text per `channel#instance@marker`. */
  deltas: Record<string, string>;
  /** Concatenated attribute-delta text per `channel#instance.key`. */
  attrDeltas: Record<string, string>;
  results: ReturnType<ChannelStreamParser['results']>;
  preamble: string;
  order: Array<{ channel: string; instance: number }>;
}

export function run(
  chunks: string[],
  specs: ChannelSpec[] = PROTOCOL_SPECS,
  options: ChannelParserOptions = {},
  subscribers?: ChannelSubscribers,
): Outcome {
  const p = new ChannelStreamParser(specs, options, subscribers);
  const events: ChannelEvent[] = [];
  for (const c of chunks) events.push(...p.push(c));
  events.push(...p.end());
  return outcome(events, p);
}

export function outcome(events: ChannelEvent[], p: ChannelStreamParser): Outcome {
  const deltas: Record<string, string> = {};
  const attrDeltas: Record<string, string> = {};
  const structure: string[] = [];
  for (const e of events) {
    if (e.kind === 'delta') {
      const k = `${e.channel}#${e.instance}@${e.marker}`;
      deltas[k] = (deltas[k] ?? '') + e.text;
    } else if (e.kind === 'attribute-delta') {
      const k = `${e.channel}#${e.instance}.${e.key}`;
      attrDeltas[k] = (attrDeltas[k] ?? '') + e.text;
    } else if (e.kind === 'attribute') {
      structure.push(`attribute ${e.channel}#${e.instance} ${e.key}=${JSON.stringify(e.value)}`);
    } else if (e.kind === 'complete') {
      structure.push(`complete ${e.channel}#${e.instance} ${e.closedBy}`);
    } else if (e.kind === 'open') {
      structure.push(`open ${e.channel}#${e.instance}`);
    } else {
      structure.push(`subscriber-error ${e.channel}#${e.instance} ${e.error}`);
    }
  }
  return { events, structure, deltas, attrDeltas, results: p.results(), preamble: p.preamble, order: [...p.order] };
}

/** The comparable part of an outcome (everything but the raw event list). */
export function comparable(o: Outcome): Omit<Outcome, 'events'> {
  const { events: _events, ...rest } = o;
  return rest;
}

export function deltaText(events: ChannelEvent[], channel?: string): string {
  return events
    .filter(
      (e): e is Extract<ChannelEvent, { kind: 'delta' }> => e.kind === 'delta' && (!channel || e.channel === channel),
    )
    .map((e) => e.text)
    .join('');
}
