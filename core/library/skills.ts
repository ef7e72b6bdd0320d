/**
 * Skills (`sk:<name>`): a folder with instructions (`SKILL.md`, optional YAML front matter with
 * `name` and `description`) and an optional `sources.yaml` listing the references the skill
 * relies on. Reading a skill with react.read loads its instructions and adds its sources to the
 * conversation's sources pool (merged by URL, so a source keeps its SID across turns). Pure.
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { formatZodError } from '../validation';

export const SKILL_NAME_RE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

export const SkillSourceSchema = z.strictObject({
  url: z.string().min(1).max(2_000),
  title: z.string().max(500).default(''),
  text: z.string().max(20_000).optional(),
});
export type SkillSource = z.output<typeof SkillSourceSchema>;

/** sources.yaml holds a list of sources, or `sources:` with that list. */
const SourcesListSchema = z.array(SkillSourceSchema);
const SourcesObjectSchema = z.strictObject({ sources: SourcesListSchema });

const FrontMatterSchema = z.looseObject({
  name: z.string().optional(),
  description: z.string().max(1_000).optional(),
});

export interface Skill {
  name: string;
  description: string;
  /** SKILL.md without its front matter. */
  instructions: string;
  sources: SkillSource[];
}

/** The error a malformed skill folder raises: which skill, which file, what is wrong. */
export class SkillError extends Error {
  constructor(skill: string, file: string, problem: string) {
    super(`skill "${skill}": ${file}: ${problem}`);
    this.name = 'SkillError';
  }
}

function issues(err: z.ZodError): string {
  return formatZodError(err, { root: '(root)' });
}

/** Parses a skill from its folder name and file contents. */
export function parseSkill(folder: string, skillMd: string, sourcesYaml?: string): Skill {
  let body = skillMd;
  let front: z.output<typeof FrontMatterSchema> = {};
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(skillMd);
  if (m) {
    let raw: unknown;
    try {
      raw = parseYaml(m[1]!);
    } catch (err) {
      throw new SkillError(folder, 'SKILL.md', `front matter is not YAML (${(err as Error).message})`);
    }
    const parsed = FrontMatterSchema.safeParse(raw ?? {});
    if (!parsed.success) throw new SkillError(folder, 'SKILL.md', `front matter: ${issues(parsed.error)}`);
    front = parsed.data;
    body = skillMd.slice(m[0].length);
  }
  const name = (front.name ?? folder).trim().toLowerCase();
  if (!SKILL_NAME_RE.test(name))
    throw new SkillError(folder, 'SKILL.md', `name ${JSON.stringify(name)} must match ${SKILL_NAME_RE.source}`);
  const description = (front.description ?? /^#\s+(.+)$/m.exec(body)?.[1] ?? '').trim();
  let sources: SkillSource[] = [];
  if (sourcesYaml !== undefined) {
    let raw: unknown;
    try {
      raw = parseYaml(sourcesYaml);
    } catch (err) {
      throw new SkillError(folder, 'sources.yaml', `not YAML (${(err as Error).message})`);
    }
    const doc = raw ?? [];
    const parsed = Array.isArray(doc) ? SourcesListSchema.safeParse(doc) : SourcesObjectSchema.safeParse(doc);
    if (!parsed.success) throw new SkillError(folder, 'sources.yaml', issues(parsed.error));
    sources = Array.isArray(parsed.data) ? parsed.data : parsed.data.sources;
  }
  return { name, description, instructions: body.trim(), sources };
}

/** The skills catalogue line the model sees: `sk:<name> — <description>`. */
export function skillCatalogue(skills: readonly Skill[]): string {
  return skills.map((s) => `sk:${s.name}${s.description ? ` — ${s.description}` : ''}`).join('; ');
}
