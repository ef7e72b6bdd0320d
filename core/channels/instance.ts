/**
 * One open instance of a declared channel: collects raw content, runs the emit pipeline
 * (`[[USAGE:…]]` stripping, citation replacement, surrogate-pair hold-back) and the composite
 * JSON streamer, and produces the instance summary on close.
 */
import { CitationStream, collectCitations, type SidMemo, type SourceIndex } from './citations';
import { CompositeJsonStreamer, type CompositeOut } from './composite';
import { parseJsonInstance, stripFence } from './json';
import { TokenStream, USAGE_RULE } from './tokens';
import type { ChannelParserOptions, ChannelSpec, ClosedBy, InstanceDone } from './types';

interface Stage {
  push(text: string): string;
  flush(): string;
}

/** Finished (or in-progress) instance data kept for results. */
export interface InstanceRecord {
  raw: string;
  text: string;
  obj?: unknown;
  error?: string;
  used: number[];
  cited: number[];
  closedBy?: ClosedBy;
}

const NOTHING: { text: string; attrs: CompositeOut[] } = Object.freeze({ text: '', attrs: [] as CompositeOut[] });

export class ChannelInstance {
  private readonly rawParts: string[] = [];
  private pending = '';
  private heldSurrogate = '';
  private readonly stages: Stage[] = [];
  private readonly composite?: CompositeJsonStreamer;
  private attrs: CompositeOut[] = [];

  constructor(
    readonly spec: ChannelSpec,
    readonly number: number,
    options: ChannelParserOptions,
    private readonly sources: SourceIndex,
    private readonly memo?: SidMemo,
  ) {
    const f = spec.format;
    const prose = f === 'markdown' || f === 'text' || f === 'html';
    if (prose && options.stripUsage) this.stages.push(new TokenStream(USAGE_RULE, true));
    if (prose && spec.citations) {
      const fmt = f === 'html' ? 'html' : (options.citationFormat ?? 'markdown');
      this.stages.push(new CitationStream(sources, fmt));
    }
    if (f === 'json' && spec.composite) this.composite = new CompositeJsonStreamer();
  }

  feed(text: string): void {
    this.rawParts.push(text);
    this.pending += text;
    if (this.composite) for (const o of this.composite.push(text)) this.attrs.push(o);
  }

  /** Text ready to emit now (all of it when `final`), and composite outputs produced since the last drain. */
  drain(final: boolean): { text: string; attrs: CompositeOut[] } {
    if (!final && this.pending === '' && this.attrs.length === 0) return NOTHING;
    let text = this.pending;
    this.pending = '';
    for (const s of this.stages) text = final ? s.push(text) + s.flush() : s.push(text);
    text = this.heldSurrogate + text;
    this.heldSurrogate = '';
    if (!final && text.length > 0) {
      const last = text.charCodeAt(text.length - 1);
      if (last >= 0xd800 && last <= 0xdbff) {
        this.heldSurrogate = text.slice(-1);
        text = text.slice(0, -1);
      }
    }
    if (final && this.composite) for (const o of this.composite.finish()) this.attrs.push(o);
    const attrs = this.attrs;
    this.attrs = [];
    return { text, attrs };
  }

  get raw(): string {
    if (this.rawParts.length > 1) this.rawParts.splice(0, this.rawParts.length, this.rawParts.join(''));
    return this.rawParts[0] ?? '';
  }

  /** Summary of the content so far (parsing json, collecting citations). */
  record(closedBy?: ClosedBy): InstanceRecord {
    return summarise(this.spec, this.raw, this.sources, closedBy, this.memo);
  }

  done(rec: InstanceRecord, closedBy: ClosedBy): InstanceDone {
    const d: InstanceDone = { channel: this.spec.name, instance: this.number, raw: rec.raw, text: rec.text, closedBy };
    if (rec.obj !== undefined) d.obj = rec.obj;
    if (rec.error !== undefined) d.error = rec.error;
    return d;
  }
}

export function summarise(
  spec: ChannelSpec,
  raw: string,
  sources: SourceIndex,
  closedBy?: ClosedBy,
  memo?: SidMemo,
): InstanceRecord {
  const json = spec.format === 'json';
  const rec: InstanceRecord = { raw, text: json ? stripFence(raw) : raw, used: [], cited: [] };
  if (closedBy) rec.closedBy = closedBy;
  if (json) {
    const p = parseJsonInstance(rec.text, spec.schema);
    if (p.ok) rec.obj = p.value;
    else rec.error = p.error;
  }
  if (spec.format !== 'code' && (raw.includes('[') || raw.includes('［'))) {
    const r = collectCitations(raw, sources, memo);
    rec.used = r.used;
    rec.cited = r.cited;
  }
  return rec;
}
