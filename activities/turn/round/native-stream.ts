/**
 * Streams one native tool-calling model call (a decision round or the two-phase synthesis):
 * heartbeats per chunk, publishes text deltas live on `channel` (citations rendered on 'answer';
 * an `answer start` before the first delta), publishes the model's reasoning live on 'thinking',
 * collects the tool_use blocks and the finished reasoning blocks (kept with their signatures for
 * the tool loop), shows react.write canvases while their arguments stream (write-preview.ts), and
 * aborts with the activity's cancellation signal.
 */
import { CitationStream } from '../../../core/channels';
import { ZERO_USAGE, type StopReason, type Usage } from '../../../core/model/provider';
import type { RoundStreamArgs } from './io';
import type { ReasoningBlock } from '../../../core/model/native-render';
import { writePreview } from './write-preview';

export interface NativeResponse {
  text: string;
  toolCalls: Array<{ id: string; name: string; input: unknown }>;
  /** The response's finished reasoning blocks (Anthropic thinking with signatures). */
  reasoning?: ReasoningBlock[];
  usage: Usage;
  stopReason: StopReason;
}

export async function streamNative(
  args: RoundStreamArgs & { channel: 'answer' | 'thinking'; turnId: string },
): Promise<NativeResponse> {
  const { publisher, round, channel } = args;
  const writes = writePreview(publisher, args.turnId, round);
  const citations = channel === 'answer' ? new CitationStream(args.sources, 'markdown') : undefined;
  const out: NativeResponse = { text: '', toolCalls: [], usage: ZERO_USAGE, stopReason: 'other' };
  const emit = (text: string) => {
    if (text) publisher.emit({ kind: 'delta', channel, instance: 0, payload: { text, round } });
  };
  for await (const part of args.provider.stream(args.request, { signal: args.signal })) {
    args.heartbeat({ round, chars: out.text.length, calls: out.toolCalls.length });
    writes.push(part);
    if (part.type === 'text-delta') {
      if (out.text === '' && channel === 'answer')
        publisher.emit({ kind: 'answer', payload: { phase: 'start', round } });
      out.text += part.text;
      emit(citations ? citations.push(part.text) : part.text);
    } else if (part.type === 'reasoning-delta') {
      if (part.text)
        publisher.emit({ kind: 'delta', channel: 'thinking', instance: 0, payload: { text: part.text, round } });
    } else if (part.type === 'reasoning') {
      const { type: _t, ...block } = part;
      (out.reasoning ??= []).push(block);
    } else if (part.type === 'tool-call') {
      out.toolCalls.push({ id: part.id, name: part.name, input: part.input });
    } else if (part.type === 'usage') {
      out.usage = part.usage;
    } else if (part.type === 'finish') {
      out.usage = part.usage;
      out.stopReason = part.stopReason;
    }
  }
  if (citations) emit(citations.flush());
  writes.end();
  return out;
}
