/**
 * `dreact tail <conversationId> [--after N] [--until-done]`: follows a conversation's stream
 * live (every turn, from an offset) with the terminal renderer.
 */
import { InvalidArgumentError } from 'commander';
import { followEvents } from '../../activities/store/stream-bus';
import { ConversationIdSchema } from '../../core/turn/contracts';
import { DreactError } from '../api';
import { withSession } from './commands';
import { createLiveRenderer } from './render';

/** commander parser of a stream offset (a non-negative integer). */
export function offsetArg(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer event offset');
  return n;
}

export async function tailCommand(conversationId: string, opts: { after?: number; untilDone?: boolean }): Promise<void> {
  const id = ConversationIdSchema.safeParse(conversationId);
  if (!id.success) throw new DreactError(`conversation id ${JSON.stringify(conversationId)}: ${id.error.issues.map((i) => i.message).join('; ')}`, 'bad_input');
  await withSession(async (s) => {
    const abort = new AbortController();
    const stop = () => abort.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const render = createLiveRenderer((t) => process.stdout.write(t));
    const after = opts.after ?? 0;
    process.stderr.write(`following ${conversationId} after offset ${after}${opts.untilDone ? ' until the next turn ends' : ' (Ctrl-C stops)'}\n`);
    try {
      for await (const e of followEvents(s.db.pool, conversationId, { afterSeq: after, signal: abort.signal, listen: !s.info.pglite, pollMs: s.info.pglite ? 100 : 250 })) {
        render(e);
        if (opts.untilDone && e.kind === 'done') break;
      }
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  });
}
