/**
 * Agent versions: each resolved definition a worker started with, by its content hash. Written once
 * per worker start (one statement for all its agents); read when a turn names a version the worker
 * no longer holds (its file changed and the worker restarted) and by the agent lists (`dreact agents
 * list`, `GET /v1/agents`), which show the version of each name a worker loaded last.
 */
import type { Queryable } from './db';

export interface AgentVersionRow {
  hash: string;
  name: string;
  /** The resolved definition (instructions inline; no secrets). */
  definition: Record<string, unknown>;
  /** Where the worker found it: the file and the absolute skills / knowledge folders. */
  origin: { file?: string; skillsDir?: string; knowledgeDir?: string };
  /** The tool ids the version offers (its allow-list over the worker's tools), registry order. */
  tools: string[];
  lastLoadedAt: string;
}

type Row = {
  hash: string;
  name: string;
  definition: Record<string, unknown>;
  origin: AgentVersionRow['origin'];
  tools: string[];
  last_loaded_at: Date;
};

const rowOf = (r: Row): AgentVersionRow => ({
  hash: r.hash,
  name: r.name,
  definition: r.definition,
  origin: r.origin,
  tools: r.tools,
  lastLoadedAt: r.last_loaded_at.toISOString(),
});

/** Records the versions a worker starts with (a known hash only has its last_loaded_at moved). */
export async function saveAgentVersions(
  db: Queryable,
  versions: ReadonlyArray<Omit<AgentVersionRow, 'lastLoadedAt'>>,
): Promise<void> {
  if (versions.length === 0) return;
  await db.query(
    `INSERT INTO agent_versions (hash, name, definition, origin, tools)
     SELECT v.hash, v.name, v.definition, v.origin, ARRAY(SELECT jsonb_array_elements_text(v.tools))
       FROM jsonb_to_recordset($1::jsonb) AS v(hash text, name text, definition jsonb, origin jsonb, tools jsonb)
     ON CONFLICT (hash) DO UPDATE SET last_loaded_at = now(), tools = EXCLUDED.tools`,
    [JSON.stringify(versions)],
  );
}

/** One version by its hash (undefined when no worker ever started with it). */
export async function loadAgentVersion(db: Queryable, hash: string): Promise<AgentVersionRow | undefined> {
  const res = await db.query<Row>(
    `SELECT hash, name, definition, origin, tools, last_loaded_at FROM agent_versions WHERE hash = $1`,
    [hash],
  );
  return res.rows[0] ? rowOf(res.rows[0]) : undefined;
}

/** Per agent name, the version a worker loaded last, by name. */
export async function listCurrentAgents(db: Queryable): Promise<AgentVersionRow[]> {
  const res = await db.query<Row>(
    `SELECT DISTINCT ON (name) hash, name, definition, origin, tools, last_loaded_at
       FROM agent_versions ORDER BY name, last_loaded_at DESC, hash`,
  );
  return res.rows.map(rowOf);
}
