/**
 * Per-channel subscribers: side-effect handlers created per channel instance by a factory.
 * The parser isolates every factory and handler call: a failure is reported as a
 * `subscriber-error` event (and in `ChannelResult.subscriberErrors`), the failing subscriber is
 * disabled for the rest of its instance, and the others and the stream carry on.
 */
import type { ChannelSubscriber, ChannelSubscriberFactory } from './types';

export class ChannelSubscribers {
  private readonly byChannel = new Map<string, ChannelSubscriberFactory[]>();

  /** Register a factory called on each open of `channel` (the exact declared name). */
  subscribe(channel: string, factory: ChannelSubscriberFactory): this {
    if (typeof factory !== 'function')
      throw new Error(`subscriber for channel "${channel}" must be a factory function`);
    const list = this.byChannel.get(channel) ?? [];
    list.push(factory);
    this.byChannel.set(channel, list);
    return this;
  }

  /** Register the same handler object for every instance of `channel`. */
  subscribeHandler(channel: string, handler: ChannelSubscriber): this {
    return this.subscribe(channel, () => handler);
  }

  factories(channel: string): readonly ChannelSubscriberFactory[] {
    return this.byChannel.get(channel) ?? [];
  }

  channels(): string[] {
    return [...this.byChannel.keys()];
  }
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}

export function isThenable(x: unknown): x is PromiseLike<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { then?: unknown }).then === 'function';
}
