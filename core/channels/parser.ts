/**
 * Incremental channel parser: routes `<channel:NAME>…</channel:NAME>` content, split across
 * arbitrary chunks, to per-channel deltas.
 *
 * Rules (see docs in core/channels/README.md):
 * - Text outside channels is dropped (text before the first recognised open tag is kept as `preamble`).
 * - Names are case-sensitive unless `ignoreCase`. An undeclared name opens an ignored section:
 *   it closes any open channel, and its content is dropped until its own close tag or the next open tag.
 * - An open tag while a channel is open closes it (`closedBy: 'open'`); a close tag for any
 *   other channel is dropped. Instances are numbered per channel from 0.
 * - Which `<` can start a tag depends on the channel format (see scanners.ts).
 * - Hold-back: only an undecided tag prefix (≤ 75 chars), an undecided backtick run, a partial
 *   `[[S:…]]`/`[[USAGE:…]]` token and a lone high surrogate are held; everything else is emitted
 *   at the end of each `push`.
 * - All decisions depend on the characters only, so any chunking yields the same results and the
 *   same concatenated deltas.
 */
import { sourceIndex, type SidMemo, type SourceIndex } from './citations';
import { ChannelInstance, type InstanceRecord } from './instance';
import { scannerFor, RawScanner, type ContentScanner } from './scanners';
import { ChannelSubscribers, errorText, isThenable } from './subscribers';
import { matchTag } from './tags';
import { stripInvisible } from './tokens';
import {
  CANVAS_MARKER,
  CHANNEL_FORMATS,
  CHANNEL_NAME_RE,
  DEFAULT_MARKER,
  type ChannelEvent,
  type ChannelParserOptions,
  type ChannelResult,
  type ChannelSpec,
  type ChannelSubscriber,
  type ClosedBy,
} from './types';

// Types and subscribers re-exported so callers may import everything from './parser'.
export type {
  ChannelEvent,
  ChannelFormat,
  ChannelParserOptions,
  ChannelResult,
  ChannelSpec,
  ChannelSubscriber,
  ChannelSubscriberFactory,
  ClosedBy,
  DeltaEvent,
  AttributeEvent,
  AttributeDeltaEvent,
  InstanceDone,
  SourceRef,
} from './types';
export { ChannelSubscribers } from './subscribers';

type Mode = { kind: 'outside' } | { kind: 'ignored'; name: string } | { kind: 'channel'; inst: ChannelInstance };

interface LiveSubscriber {
  sub: ChannelSubscriber;
  failed: boolean;
}

export function validateSpecs(specs: ChannelSpec[], ignoreCase: boolean): Map<string, ChannelSpec> {
  const map = new Map<string, ChannelSpec>();
  for (const s of specs) {
    if (!s || typeof s.name !== 'string' || !CHANNEL_NAME_RE.test(s.name)) {
      throw new Error(`invalid channel name ${JSON.stringify(s?.name)}: use 1-64 chars of [A-Za-z0-9_-]`);
    }
    if (!(CHANNEL_FORMATS as readonly string[]).includes(s.format)) {
      throw new Error(
        `channel "${s.name}": unknown format ${JSON.stringify(s.format)} (expected ${CHANNEL_FORMATS.join(', ')})`,
      );
    }
    if (s.marker !== undefined && (typeof s.marker !== 'string' || s.marker === '')) {
      throw new Error(`channel "${s.name}": marker must be a non-empty string`);
    }
    if (s.schema && s.format !== 'json') throw new Error(`channel "${s.name}": a schema needs format json`);
    if (s.composite && s.format !== 'json') throw new Error(`channel "${s.name}": composite needs format json`);
    const key = ignoreCase ? s.name.toLowerCase() : s.name;
    if (map.has(key))
      throw new Error(
        `channel "${s.name}" is declared twice${ignoreCase ? ' (names compared case-insensitively)' : ''}`,
      );
    map.set(key, s);
  }
  return map;
}

export class ChannelStreamParser {
  private readonly specs: Map<string, ChannelSpec>;
  private readonly options: ChannelParserOptions;
  private readonly subscribers: ChannelSubscribers;
  private readonly sources: SourceIndex;
  private readonly sidMemo: SidMemo = new Map();
  private buf = '';
  private ended = false;
  private mode: Mode = { kind: 'outside' };
  private scanner: ContentScanner = new RawScanner();
  private live: LiveSubscriber[] = [];
  private recognised = false;
  private preambleText = '';
  private readonly orderList: Array<{ channel: string; instance: number }> = [];
  private readonly records = new Map<string, InstanceRecord[]>();
  private readonly subscriberErrors = new Map<string, string[]>();
  private readonly deltaIndex = new Map<string, number>();
  /** Rejections of promises returned by subscriber handlers (they arrive after the events). */
  readonly asyncErrors: Array<{ channel: string; instance: number; error: string }> = [];

  constructor(specs: ChannelSpec[], options: ChannelParserOptions = {}, subscribers?: ChannelSubscribers) {
    this.options = options;
    this.specs = validateSpecs(specs, options.ignoreCase ?? false);
    this.subscribers = subscribers ?? new ChannelSubscribers();
    this.sources = sourceIndex(options.sources ?? []);
    for (const ch of this.subscribers.channels()) {
      if (this.lookup(ch)?.name !== ch) throw new Error(`subscriber registered for undeclared channel "${ch}"`);
    }
    for (const s of specs) this.records.set(s.name, []);
  }

  /** Text outside channels before the first recognised open tag (tags included, verbatim). */
  get preamble(): string {
    return this.preambleText;
  }

  get order(): ReadonlyArray<{ channel: string; instance: number }> {
    return this.orderList;
  }

  /** Input characters not yet decided (a possible tag prefix, an unfinished backtick run…). */
  get heldChars(): number {
    return this.buf.length;
  }

  push(chunk: string): ChannelEvent[] {
    if (this.ended) throw new Error('ChannelStreamParser.push called after end()');
    if (typeof chunk !== 'string') throw new Error(`ChannelStreamParser.push expects a string, got ${typeof chunk}`);
    const events: ChannelEvent[] = [];
    this.buf += stripInvisible(chunk);
    this.process(false, events);
    if (this.mode.kind === 'channel') this.flush(this.mode.inst, false, events);
    return events;
  }

  end(): ChannelEvent[] {
    if (this.ended) return [];
    const events: ChannelEvent[] = [];
    this.process(true, events);
    if (this.mode.kind === 'channel') this.close(this.mode.inst, 'end', events);
    this.mode = { kind: 'outside' };
    this.ended = true;
    return events;
  }

  results(): Record<string, ChannelResult> {
    const out: Record<string, ChannelResult> = {};
    const open = this.mode.kind === 'channel' ? this.mode.inst : undefined;
    for (const spec of this.specs.values()) {
      const recs = [...(this.records.get(spec.name) ?? [])];
      if (open && open.spec === spec) recs.push(open.record());
      out[spec.name] = buildResult(spec, recs, this.subscriberErrors.get(spec.name) ?? []);
    }
    return out;
  }

  private lookup(name: string): ChannelSpec | undefined {
    return this.specs.get(this.options.ignoreCase ? name.toLowerCase() : name);
  }

  private process(final: boolean, events: ChannelEvent[]): void {
    const text = this.buf;
    let i = 0;
    while (i < text.length) {
      const r = this.scanner.scan(text, i, final);
      if (r.stop > i) this.content(text.slice(i, r.stop));
      i = r.stop;
      if (r.reason !== 'tag') break;
      const t = matchTag(text, i, final);
      if (t.kind === 'partial') break;
      if (t.kind === 'none') {
        this.content('<');
        i += 1;
        continue;
      }
      this.tag(t.kind, t.name, text.slice(i, i + t.length), events);
      i += t.length;
    }
    this.buf = i === 0 ? text : text.slice(i);
  }

  private content(text: string): void {
    if (this.mode.kind === 'channel') this.mode.inst.feed(text);
    else if (!this.recognised) this.preambleText += text;
  }

  private tag(kind: 'open' | 'close', name: string, tagText: string, events: ChannelEvent[]): void {
    const mode = this.mode;
    if (kind === 'open') {
      if (mode.kind === 'channel') this.close(mode.inst, 'open', events);
      const spec = this.lookup(name);
      if (!spec) {
        if (!this.recognised) this.preambleText += tagText;
        this.mode = { kind: 'ignored', name };
        this.scanner = new RawScanner();
        return;
      }
      this.open(spec, events);
      return;
    }
    if (mode.kind === 'channel' && this.lookup(name) === mode.inst.spec) {
      this.close(mode.inst, 'tag', events);
      this.mode = { kind: 'outside' };
      this.scanner = new RawScanner();
      return;
    }
    if (
      mode.kind === 'ignored' &&
      (this.options.ignoreCase ? mode.name.toLowerCase() === name.toLowerCase() : mode.name === name)
    ) {
      this.mode = { kind: 'outside' };
      this.scanner = new RawScanner();
    }
    if (!this.recognised) this.preambleText += tagText;
  }

  private open(spec: ChannelSpec, events: ChannelEvent[]): void {
    this.recognised = true;
    const recs = this.records.get(spec.name)!;
    const number = recs.length;
    const inst = new ChannelInstance(spec, number, this.options, this.sources, this.sidMemo);
    this.mode = { kind: 'channel', inst };
    this.scanner = scannerFor(spec.format);
    this.orderList.push({ channel: spec.name, instance: number });
    events.push({ kind: 'open', channel: spec.name, instance: number });
    this.live = [];
    for (const factory of this.subscribers.factories(spec.name)) {
      try {
        const sub = factory(spec.name, number);
        if (sub) this.live.push({ sub, failed: false });
      } catch (e) {
        this.fail(spec.name, number, `subscriber factory failed: ${errorText(e)}`, events);
      }
    }
  }

  private close(inst: ChannelInstance, closedBy: ClosedBy, events: ChannelEvent[]): void {
    this.flush(inst, true, events);
    const rec = inst.record(closedBy);
    this.records.get(inst.spec.name)!.push(rec);
    const done = inst.done(rec, closedBy);
    this.notify(inst, events, (s) => s.onComplete?.(done));
    events.push({ kind: 'complete', channel: inst.spec.name, instance: inst.number, closedBy });
    this.live = [];
  }

  private flush(inst: ChannelInstance, final: boolean, events: ChannelEvent[]): void {
    const { text, attrs } = inst.drain(final);
    const channel = inst.spec.name;
    const instance = inst.number;
    if (text) {
      const index = this.deltaIndex.get(channel) ?? 0;
      this.deltaIndex.set(channel, index + 1);
      const ev = {
        kind: 'delta' as const,
        channel,
        instance,
        marker: inst.spec.marker ?? DEFAULT_MARKER,
        format: inst.spec.format,
        text,
        index,
      };
      events.push(ev);
      this.notify(inst, events, (s) => s.onDelta?.(text, ev));
    }
    for (const a of attrs) {
      if (a.kind === 'attribute') {
        const ev = { kind: 'attribute' as const, channel, instance, marker: CANVAS_MARKER, key: a.key, value: a.value };
        events.push(ev);
        this.notify(inst, events, (s) => s.onAttribute?.(a.key, a.value, ev));
      } else {
        const ev = {
          kind: 'attribute-delta' as const,
          channel,
          instance,
          marker: CANVAS_MARKER,
          key: a.key,
          text: a.text,
        };
        events.push(ev);
        this.notify(inst, events, (s) => s.onAttributeDelta?.(a.key, a.text, ev));
      }
    }
  }

  private notify(inst: ChannelInstance, events: ChannelEvent[], call: (s: ChannelSubscriber) => unknown): void {
    const channel = inst.spec.name;
    const instance = inst.number;
    for (const l of this.live) {
      if (l.failed) continue;
      try {
        const r = call(l.sub);
        if (isThenable(r)) {
          r.then(undefined, (e: unknown) => {
            this.asyncErrors.push({ channel, instance, error: errorText(e) });
            this.pushSubscriberError(channel, `instance ${instance}: ${errorText(e)}`);
          });
        }
      } catch (e) {
        l.failed = true;
        this.fail(channel, instance, errorText(e), events);
      }
    }
  }

  private fail(channel: string, instance: number, error: string, events: ChannelEvent[]): void {
    events.push({ kind: 'subscriber-error', channel, instance, error });
    this.pushSubscriberError(channel, `instance ${instance}: ${error}`);
  }

  private pushSubscriberError(channel: string, error: string): void {
    const list = this.subscriberErrors.get(channel) ?? [];
    list.push(error);
    this.subscriberErrors.set(channel, list);
  }
}

function buildResult(spec: ChannelSpec, recs: InstanceRecord[], subscriberErrors: string[]): ChannelResult {
  const res: ChannelResult = {
    channel: spec.name,
    raw: recs.map((r) => r.raw).join(''),
    instances: recs.map((r) => r.text),
    objs: spec.format === 'json' ? recs.map((r) => r.obj) : [],
    usedSources: sortedUnion(recs.map((r) => r.used)),
    citedSources: sortedUnion(recs.map((r) => r.cited)),
    closedBy: recs.flatMap((r) => (r.closedBy ? [r.closedBy] : [])),
    subscriberErrors: [...subscriberErrors],
  };
  if (spec.schema !== undefined && recs.length > 1) {
    // A model-backed channel holds one object: several instances leave no single `obj`.
    res.error = `multiple_channel_instances:${recs.length}`;
    return res;
  }
  if (spec.format === 'json' && recs[0]?.obj !== undefined) res.obj = recs[0].obj;
  const firstErr = recs.findIndex((r) => r.error !== undefined);
  if (firstErr >= 0) res.error = `instance ${firstErr}: ${recs[firstErr]!.error}`;
  return res;
}

function sortedUnion(lists: number[][]): number[] {
  return [...new Set(lists.flat())].sort((a, b) => a - b);
}

/** Parse a complete text in one go (same rules as the stream). */
export function parseChannels(
  text: string,
  specs: ChannelSpec[],
  options?: ChannelParserOptions,
  subscribers?: ChannelSubscribers,
): {
  events: ChannelEvent[];
  results: Record<string, ChannelResult>;
  preamble: string;
  order: Array<{ channel: string; instance: number }>;
} {
  const p = new ChannelStreamParser(specs, options, subscribers);
  const events = [...p.push(text), ...p.end()];
  return { events, results: p.results(), preamble: p.preamble, order: [...p.order] };
}
