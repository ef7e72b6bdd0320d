/**
 * Channeled streamer: public types.
 *
 * The model wraps each logical output in `<channel:NAME>…</channel:NAME>`; the parser routes the
 * content of each declared channel to its emit marker as incremental deltas. Pure types only.
 */
import type { z } from 'zod';

export const CHANNEL_FORMATS = ['markdown', 'text', 'json', 'html', 'code'] as const;
export type ChannelFormat = (typeof CHANNEL_FORMATS)[number];

/** Channel names: 1-64 chars of `[A-Za-z0-9_-]` (the tag grammar). */
export const CHANNEL_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_CHANNEL_NAME = 64;
export const DEFAULT_MARKER = 'answer';
export const CANVAS_MARKER = 'canvas' as const;

export interface ChannelSpec {
  name: string;
  format: ChannelFormat;
  /** Emit marker for deltas, default `'answer'`. */
  marker?: string;
  /** zod schema validating the parsed JSON of each instance (json channels only). */
  schema?: z.ZodType;
  /** Replace `[[S:n]]` tokens in emitted deltas (markdown, text, html channels; ignored for json/code). */
  citations?: boolean;
  /** json channels: emit each top-level attribute to marker `'canvas'` as soon as it is complete. */
  composite?: boolean;
}

export interface SourceRef {
  sid: number;
  title?: string;
  url?: string;
}

export type CitationFormat = 'markdown' | 'html';

export interface ChannelParserOptions {
  sources?: SourceRef[];
  /** Citation rendering for markdown/text channels (html channels always render html). Default markdown. */
  citationFormat?: CitationFormat;
  /** Strip `[[USAGE:…]]` tokens from emitted deltas of markdown/text/html channels (raw keeps them). */
  stripUsage?: boolean;
  /** Match channel names case-insensitively. Default false: names are case-sensitive. */
  ignoreCase?: boolean;
}

/** How an instance ended: its own close tag, an implicit close by another open tag, or end of stream. */
export type ClosedBy = 'tag' | 'open' | 'end';

export interface DeltaEvent {
  kind: 'delta';
  channel: string;
  instance: number;
  marker: string;
  format: ChannelFormat;
  text: string;
  /** Per-channel delta counter (across instances), starting at 0. */
  index: number;
}

export interface AttributeEvent {
  kind: 'attribute';
  channel: string;
  instance: number;
  marker: 'canvas';
  key: string;
  value: unknown;
}

/** Composite json: a piece of a top-level string attribute, streamed before the value closes. */
export interface AttributeDeltaEvent {
  kind: 'attribute-delta';
  channel: string;
  instance: number;
  marker: 'canvas';
  key: string;
  text: string;
}

export type ChannelEvent =
  | { kind: 'open'; channel: string; instance: number }
  | DeltaEvent
  | AttributeEvent
  | AttributeDeltaEvent
  | { kind: 'complete'; channel: string; instance: number; closedBy: ClosedBy }
  | { kind: 'subscriber-error'; channel: string; instance: number; error: string };

export interface ChannelResult {
  channel: string;
  /** All instances' raw content concatenated (exactly as streamed, minus invisible characters). */
  raw: string;
  /** Per-instance content; json instances have their ``` fence stripped and are trimmed. */
  instances: string[];
  /** json: the parsed (and zod-validated) first instance; unset when a schema-bound channel has several. */
  obj?: unknown;
  /** json: per instance, the parsed (validated) value, or undefined when it failed. */
  objs: unknown[];
  /** Sorted SIDs cited in this channel that resolve to a known source. */
  usedSources: number[];
  /** Sorted SIDs cited in this channel, resolvable or not. */
  citedSources: number[];
  /** How each instance ended. */
  closedBy: ClosedBy[];
  /** Errors raised by this channel's subscribers. */
  subscriberErrors: string[];
  /**
   * First failure: json parse / schema validation, prefixed with the instance number; for a
   * model-backed (schema-bound) channel with more than one instance, `multiple_channel_instances:N`.
   */
  error?: string;
}

/** Snapshot of a finished instance, handed to `onComplete`. */
export interface InstanceDone {
  channel: string;
  instance: number;
  raw: string;
  /** Content with json fences stripped. */
  text: string;
  obj?: unknown;
  error?: string;
  closedBy: ClosedBy;
}

/**
 * A per-instance side-effect handler. Handlers are synchronous; a thrown error (or a rejected
 * returned promise, see `ChannelStreamParser.asyncErrors`) is reported, never propagated.
 */
export interface ChannelSubscriber {
  onDelta?(text: string, event: DeltaEvent): unknown;
  onAttribute?(key: string, value: unknown, event: AttributeEvent): unknown;
  onAttributeDelta?(key: string, text: string, event: AttributeDeltaEvent): unknown;
  onComplete?(done: InstanceDone): unknown;
}

/** Called when an instance opens; may return undefined to skip this instance. */
export type ChannelSubscriberFactory = (channel: string, instance: number) => ChannelSubscriber | undefined | void;
