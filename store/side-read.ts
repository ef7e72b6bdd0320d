import type { Pool } from 'pg';

/**
 * Columns read beside the `conversations` row (aliased `c`): `columns` writes their SQL, taking
 * each value it needs through `param` (which returns its placeholder); `map` reads them back
 * (`row` is undefined when the conversation does not exist).
 */
export interface SideRead<T> {
  columns(param: (value: unknown) => string): string;
  map(row: Record<string, unknown> | undefined): T;
}

/** Runs a side read on its own: `SELECT <columns> FROM conversations c WHERE c.id = $1`. */
export async function readSide<T>(db: Pool, conversationId: string, side: SideRead<T>): Promise<T> {
  const params: unknown[] = [conversationId];
  const columns = side.columns((value) => `$${params.push(value)}`);
  const res = await db.query(`SELECT ${columns} FROM conversations c WHERE c.id = $1`, params);
  return side.map(res.rows[0] as Record<string, unknown> | undefined);
}
