/**
 * Forks: a conversation whose timeline starts with another's blocks up to a turn, shared by
 * reference — a `conversation_forks` row (source, up_to_turn, up_to_seq) that the block loaders
 * (store/timeline-store.ts `FORK_PREFIX_JOIN`, store/view-cache.ts) follow; no block is copied.
 * The source's sources pool is copied (one small row) so inherited citations resolve. A fork of a
 * fork is refused (the loaders follow one level).
 */
import type { Pool } from 'pg';
import { withTransaction, type Queryable } from './db';
import { SOURCES_POOL_KIND, SOURCES_POOL_KEY } from './sources-store';

export interface ForkRow {
  conversationId: string;
  sourceConversationId: string;
  upToTurn: number;
  upToSeq: number;
}

export async function forkOf(db: Queryable, conversationId: string): Promise<ForkRow | undefined> {
  const res = await db.query(`SELECT * FROM conversation_forks WHERE conversation_id = $1`, [conversationId]);
  const r = res.rows[0];
  return (
    r && {
      conversationId: r.conversation_id,
      sourceConversationId: r.source_conversation_id,
      upToTurn: r.up_to_turn,
      upToSeq: Number(r.up_to_seq),
    }
  );
}

/**
 * Creates `target` as a fork of `source` at turn `upToTurn` (owned like the source). Errors name
 * what is wrong: an unknown source or turn, a target that exists, a source that is a fork.
 */
export async function forkConversation(
  pool: Pool,
  f: { source: string; target: string; upToTurn: number },
): Promise<ForkRow> {
  return withTransaction(pool, async (tx) => {
    const owner = await tx.query(`SELECT tenant_id, project_id, user_id FROM conversations WHERE id = $1`, [f.source]);
    if (!owner.rows[0]) throw new Error(`fork: unknown conversation "${f.source}"`);
    if (await forkOf(tx, f.source))
      throw new Error(`fork: "${f.source}" is a fork itself; fork its source at the same turn instead`);
    const turn = await tx.query(`SELECT 1 FROM turns WHERE conversation_id = $1 AND turn_index = $2`, [
      f.source,
      f.upToTurn,
    ]);
    if (!turn.rows[0]) throw new Error(`fork: conversation "${f.source}" has no turn ${f.upToTurn}`);
    // The prefix ends before the first block of a later turn (a later turn's blocks never join it).
    const cut = await tx.query<{ up_to_seq: string | null }>(
      `SELECT coalesce(
         (SELECT min(seq) - 1 FROM timeline_blocks WHERE conversation_id = $1
            AND substring(turn_id FROM '^turn_([0-9]+)$')::int > $2),
         (SELECT max(seq) FROM timeline_blocks WHERE conversation_id = $1)) AS up_to_seq`,
      [f.source, f.upToTurn],
    );
    const created = await tx.query(
      `INSERT INTO conversations (id, tenant_id, project_id, user_id) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
      [f.target, owner.rows[0].tenant_id, owner.rows[0].project_id, owner.rows[0].user_id],
    );
    if ((created.rowCount ?? 0) === 0) throw new Error(`fork: conversation "${f.target}" exists already`);
    const upToSeq = Number(cut.rows[0]?.up_to_seq ?? 0);
    await tx.query(
      `INSERT INTO conversation_forks (conversation_id, source_conversation_id, up_to_turn, up_to_seq) VALUES ($1, $2, $3, $4)`,
      [f.target, f.source, f.upToTurn, upToSeq],
    );
    await tx.query(
      `INSERT INTO artifacts (conversation_id, kind, key, turn_id, mime, payload, size_bytes, created_by)
       SELECT $2, kind, key, turn_id, mime, payload, size_bytes, created_by FROM artifacts
        WHERE conversation_id = $1 AND kind = $3 AND key = $4`,
      [f.source, f.target, SOURCES_POOL_KIND, SOURCES_POOL_KEY],
    );
    return { conversationId: f.target, sourceConversationId: f.source, upToTurn: f.upToTurn, upToSeq };
  });
}
