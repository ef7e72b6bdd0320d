/**
 * Streams one decision call through the channel parser: heartbeats per chunk (the round
 * pipeline heartbeats on a timer meanwhile),
 * publishes per-channel deltas live (thinking, answer, followup, composite canvas attributes),
 * stops the provider stream early when the response prefix already violates the protocol, and
 * aborts with the activity's cancellation signal.
 */
import { ChannelStreamParser, type ChannelEvent } from '../../../core/channels';
import { DECISION_CHANNEL_SPECS } from '../../../core/decision/schema';
import { decisionPrefixViolation } from '../../../core/decision/interpret';
import type { Notice } from '../../../core/decision/notice';
import { ZERO_USAGE, type Usage } from '../../../core/model/provider';
import type { RoundStreamArgs } from './io';
import type { LIVE_DELTA_CHANNELS } from '../../../core/stream/events';

/** Channels whose deltas go to clients live (code: what an exec is about to run); the decision JSON and the summary stay internal. */
const LIVE_CHANNELS: ReadonlySet<string> = new Set<LiveChannel>(['thinking', 'answer', 'followup', 'code']);
type LiveChannel = (typeof LIVE_DELTA_CHANNELS)[number];
const isLive = (c: string): c is LiveChannel => LIVE_CHANNELS.has(c);

export interface DecisionStream {
  raw: string;
  parser: ChannelStreamParser;
  usage: Usage;
  /** Set when the stream was stopped early for a protocol violation. */
  prefixViolation?: Notice;
}

export async function streamDecision(args: RoundStreamArgs): Promise<DecisionStream> {
  const { provider, request, publisher, round } = args;
  const parser = new ChannelStreamParser([...DECISION_CHANNEL_SPECS], {
    sources: args.sources,
    citationFormat: 'markdown',
  });
  // Stop the provider stream when we decide to (prefix violation) without aborting the activity.
  const local = new AbortController();
  const onAbort = () => local.abort(args.signal.reason);
  args.signal.addEventListener('abort', onAbort, { once: true });
  let raw = '';
  let usage: Usage = ZERO_USAGE;
  let prefixViolation: Notice | undefined;
  let thinkingOpen = false;
  let answerStarted = false;

  const publish = (events: ChannelEvent[]) => {
    for (const e of events) {
      if (e.kind === 'open' && e.channel === 'thinking' && !thinkingOpen) {
        thinkingOpen = true;
      } else if (e.kind === 'complete' && e.channel === 'thinking') {
        publisher.emit({ kind: 'step', payload: { phase: 'thinking.done', round } });
      } else if (e.kind === 'open' && e.channel === 'answer' && !answerStarted) {
        answerStarted = true;
        publisher.emit({ kind: 'answer', payload: { phase: 'start', round } });
      } else if (e.kind === 'delta' && isLive(e.channel) && e.text) {
        publisher.emit({ kind: 'delta', channel: e.channel, instance: e.instance, payload: { text: e.text, round } });
      } else if (e.kind === 'attribute') {
        publisher.emit({
          kind: 'attribute',
          channel: 'canvas',
          instance: e.instance,
          payload: { key: e.key, value: e.value, round },
        });
      } else if (e.kind === 'subscriber-error') {
        publisher.emit({
          kind: 'step',
          payload: { phase: 'subscriber.error', round, channel: e.channel, error: e.error },
        });
      }
    }
  };

  try {
    for await (const part of provider.stream(request, { signal: local.signal })) {
      args.heartbeat({ round, chars: raw.length });
      if (part.type === 'text-delta') {
        raw += part.text;
        publish(parser.push(part.text));
        if (parser.order.length > 0 || parser.preamble.length > 200) {
          prefixViolation = decisionPrefixViolation({ preamble: parser.preamble, order: parser.order });
          if (prefixViolation) {
            local.abort(new Error('protocol prefix violation'));
            break;
          }
        }
      } else if (part.type === 'reasoning-delta') {
        // A model's own reasoning (DeepSeek-style reasoning_content, Anthropic thinking): the thinking channel.
        if (part.text)
          publisher.emit({ kind: 'delta', channel: 'thinking', instance: 0, payload: { text: part.text, round } });
      } else if (part.type === 'usage' || part.type === 'finish') {
        usage = part.usage;
      }
    }
    publish(parser.end());
  } finally {
    args.signal.removeEventListener('abort', onAbort);
  }
  return { raw, parser, usage, prefixViolation };
}
