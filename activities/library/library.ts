/**
 * The deployment's library: skills (DREACT_SKILLS_DIR, read from disk when the worker starts)
 * and the knowledge space (DREACT_KNOWLEDGE_DIR, indexed into Postgres when the worker starts:
 * markdown, text and PDF — PDF text extracted with unpdf; unchanged files, by content hash, are
 * not extracted again; removed files leave the index). Tools reach it through this object; both
 * halves are absent when not configured, and so are their tools.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Db } from '../../store/db';
import {
  getKnowledgeDocument,
  knowledgeHashes,
  searchKnowledge,
  syncKnowledge,
  type KnowledgeDocument,
  type KnowledgeHit,
} from '../../store/knowledge-store';
import { parseSkill, SkillError, type Skill } from '../../core/library/skills';
import { knowledgeChunks, knowledgeMime, knowledgeTitle } from '../../core/library/knowledge';

/** Documents larger than this are not indexed (and the worker log says so). */
export const KNOWLEDGE_MAX_FILE_BYTES = 20 * 1024 * 1024;

export interface KnowledgeSpace {
  space: string;
  documents: number;
  search(query: string, limit: number): Promise<KnowledgeHit[]>;
  read(path: string): Promise<{ text: string; mime: string; sizeBytes: number; title: string } | undefined>;
}

export interface Library {
  skills: ReadonlyMap<string, Skill>;
  knowledge?: KnowledgeSpace;
}

export interface LibraryConfig {
  knowledgeDir?: string;
  skillsDir?: string;
  /** Name of the deployment's knowledge space (default "default"). */
  space?: string;
}

export function libraryConfigFromEnv(env: NodeJS.ProcessEnv = process.env): LibraryConfig {
  const knowledgeDir = env.DREACT_KNOWLEDGE_DIR?.trim();
  const skillsDir = env.DREACT_SKILLS_DIR?.trim();
  const space = env.DREACT_KNOWLEDGE_SPACE?.trim();
  return {
    ...(knowledgeDir ? { knowledgeDir } : {}),
    ...(skillsDir ? { skillsDir } : {}),
    ...(space ? { space } : {}),
  };
}

async function mustBeDir(dir: string, what: string): Promise<void> {
  const s = await stat(dir).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`${what} ${dir} cannot be read: ${err.code ?? err.message}`);
  });
  if (!s.isDirectory()) throw new Error(`${what} ${dir} is not a directory`);
}

/** Every skill folder (one holding SKILL.md) of `dir`; a malformed skill stops the worker with its reason. */
export async function loadSkills(dir: string): Promise<Map<string, Skill>> {
  await mustBeDir(dir, 'DREACT_SKILLS_DIR');
  const skills = new Map<string, Skill>();
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory()) continue;
    const folder = join(dir, entry.name);
    const skillMd = await readFile(join(folder, 'SKILL.md'), 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (skillMd === undefined) continue;
    const sources = await readFile(join(folder, 'sources.yaml'), 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    const skill = parseSkill(entry.name, skillMd, sources);
    if (skills.has(skill.name)) throw new SkillError(entry.name, 'SKILL.md', `name "${skill.name}" is used twice`);
    skills.set(skill.name, skill);
  }
  return skills;
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

async function extract(bytes: Buffer, mime: string): Promise<string> {
  if (mime !== 'application/pdf') return bytes.toString('utf8');
  const { extractText, getDocumentProxy } = await import('unpdf');
  const { text } = await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true });
  return text;
}

export interface KnowledgeIndexReport {
  documents: number;
  written: number;
  removed: number;
  skipped: Array<{ path: string; reason: string }>;
}

/** Brings the space's index in line with the folder. */
export async function indexKnowledgeSpace(db: Db, dir: string, space: string): Promise<KnowledgeIndexReport> {
  await mustBeDir(dir, 'DREACT_KNOWLEDGE_DIR');
  const known = await knowledgeHashes(db.pool, space);
  const changed: KnowledgeDocument[] = [];
  const present: string[] = [];
  const skipped: KnowledgeIndexReport['skipped'] = [];
  for (const file of (await walk(dir)).sort()) {
    const path = relative(dir, file).split(sep).join('/');
    const mime = knowledgeMime(path);
    if (!mime) {
      skipped.push({ path, reason: 'not markdown, text or PDF' });
      continue;
    }
    const bytes = await readFile(file);
    if (bytes.length > KNOWLEDGE_MAX_FILE_BYTES) {
      skipped.push({ path, reason: `larger than ${KNOWLEDGE_MAX_FILE_BYTES} bytes` });
      continue;
    }
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    if (known.get(path) === sha256) {
      present.push(path);
      continue;
    }
    let text: string;
    try {
      text = await extract(bytes, mime);
    } catch (err) {
      skipped.push({ path, reason: `text could not be extracted (${(err as Error).message})` });
      continue;
    }
    present.push(path);
    changed.push({
      path,
      sha256,
      mime,
      title: knowledgeTitle(path, text),
      text,
      sizeBytes: bytes.length,
      chunks: knowledgeChunks(text),
    });
  }
  const { written, removed } = await syncKnowledge(db, space, changed, present);
  return { documents: present.length, written, removed, skipped };
}

/** Opens what the config names (skills read, knowledge indexed); `log` hears what was skipped. */
export async function openLibrary(
  db: Db,
  config: LibraryConfig,
  log: (message: string) => void = (m) => console.warn(m),
): Promise<Library> {
  const skills = config.skillsDir ? await loadSkills(config.skillsDir) : new Map<string, Skill>();
  if (!config.knowledgeDir) return { skills };
  const space = config.space ?? 'default';
  const report = await indexKnowledgeSpace(db, config.knowledgeDir, space);
  for (const s of report.skipped) log(`knowledge space "${space}": ${s.path} not indexed: ${s.reason}`);
  return {
    skills,
    knowledge: {
      space,
      documents: report.documents,
      search: (query, limit) => searchKnowledge(db.pool, space, query, limit),
      read: (path) => getKnowledgeDocument(db.pool, space, path),
    },
  };
}
