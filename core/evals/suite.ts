/**
 * Eval suites (`evals/<suite>.yaml`): the cases an agent is measured on — the conversation to
 * play (turns, attachments, a followup or steer at a round), what is expected of it (trajectory,
 * answer, limits, files, an optional rubric for an LLM judge) and how many trials to run. The zod
 * schema is the single source of the types; `parseSuite` reads YAML text and names file, case and
 * field in every error. Pure (the `yaml` parser is a pure library).
 */
import { z } from 'zod';
import { parseDocument } from 'yaml';
import { formatZodError } from '../validation';
import { ModelConfigSchema } from '../model/config';

const Slug = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'a lowercase slug (a-z 0-9 _ -, at most 64)');

/** A matcher of one value: exact, by regular expression (on its string form), or by JSON Schema. */
export const ValueMatcherSchema = z.union([
  z.strictObject({ equals: z.unknown() }),
  z.strictObject({ regex: z.string().min(1) }),
  z.strictObject({ schema: z.record(z.string(), z.unknown()) }),
]);
export type ValueMatcher = z.infer<typeof ValueMatcherSchema>;

export const ExpectedCallSchema = z.strictObject({
  /** A tool id (`react.write`), or a glob with `*` (`mcp.docs.*`). */
  tool: z.string().min(1),
  /** Matchers by parameter name (a bare value means `equals`). */
  params: z.record(z.string(), z.union([ValueMatcherSchema, z.string(), z.number(), z.boolean(), z.null()])).optional(),
});
export type ExpectedCall = z.infer<typeof ExpectedCallSchema>;

export const ToolsExpectSchema = z.strictObject({
  /**
   * strict: exactly these calls in this order; unordered: exactly these calls in any order;
   * subset: these calls appear in order among others; superset: every call made is one of these.
   */
  match: z.enum(['strict', 'unordered', 'subset', 'superset']).default('subset'),
  calls: z.array(ExpectedCallSchema).default([]),
  /** Tools that must not be called at all. */
  forbid: z.array(z.string().min(1)).optional(),
});

export const AnswerExpectSchema = z.strictObject({
  contains: z.array(z.string().min(1)).optional(),
  not_contains: z.array(z.string().min(1)).optional(),
  regex: z.string().min(1).optional(),
  /** The answer parses as JSON (a fenced block or the whole text) valid under this schema. */
  schema: z.record(z.string(), z.unknown()).optional(),
  citations: z
    .union([
      z.boolean(),
      z.strictObject({
        /** At least this many distinct sources cited. */
        min: z.number().int().positive().optional(),
        /** Sources that must be cited: a URL substring or a title substring. */
        sources: z.array(z.string().min(1)).optional(),
      }),
    ])
    .optional(),
  /** No protocol notices (invalid decisions the runtime had to correct) in any turn (default false). */
  no_protocol_notices: z.boolean().optional(),
});

export const LimitsExpectSchema = z.strictObject({
  rounds: z.number().int().positive().optional(),
  tokens: z.number().int().positive().optional(),
  cost_usd: z.number().nonnegative().optional(),
  wall_seconds: z.number().positive().optional(),
});

export const FileExpectSchema = z.strictObject({
  /** The file's name or path under the turn's files (`notes.md`). */
  name: z.string().min(1),
  /** A MIME type or its prefix (`text/`). */
  type: z.string().min(1).optional(),
  content: ValueMatcherSchema.or(z.strictObject({ contains: z.string().min(1) })).optional(),
});

const AtRound = z.number().int().positive().max(100);

/**
 * A followup or steer sent during a turn: once the turn reached round `at_round`, or — with
 * `during_tool` — once that round's call of this tool started (a tool that takes a while gives the
 * event a fixed place to land, so a replayed run sees it at the same point).
 */
const TurnEventSchema = z.strictObject({
  at_round: AtRound,
  text: z.string().min(1),
  during_tool: z.string().min(1).optional(),
});
export type TurnEventSpec = z.infer<typeof TurnEventSchema>;

export const TurnSpecSchema = z.union([
  z.string().min(1),
  z.strictObject({
    prompt: z.string().min(1),
    /** Files attached to the prompt: a name and its text. */
    attachments: z.array(z.strictObject({ name: z.string().min(1), text: z.string() })).optional(),
    followup: TurnEventSchema.optional(),
    steer: TurnEventSchema.optional(),
  }),
]);
export type TurnSpec = z.infer<typeof TurnSpecSchema>;

export const EvalCaseSchema = z.strictObject({
  id: Slug,
  description: z.string().optional(),
  agent: Slug.optional(),
  /** The model of this case's turns (e.g. a scripted script); else the suite's, else the agent's. */
  model: ModelConfigSchema.optional(),
  turns: z.array(TurnSpecSchema).min(1).max(20),
  /** Turn options: the round budget and the context budget (e.g. a small one to exercise compaction). */
  options: z
    .strictObject({
      max_rounds: z.number().int().positive().max(100).optional(),
      context_max_tokens: z.number().int().min(1_000).max(2_000_000).optional(),
    })
    .optional(),
  expect: z
    .strictObject({
      tools: ToolsExpectSchema.optional(),
      answer: AnswerExpectSchema.optional(),
      limits: LimitsExpectSchema.optional(),
      files: z.array(FileExpectSchema).optional(),
    })
    .default({}),
  rubric: z.string().min(1).optional(),
  /** The judge's score (0–1) at or above which the rubric passes. */
  threshold: z.number().min(0).max(1).default(0.7),
  trials: z.number().int().positive().max(100).optional(),
});
export type EvalCase = z.infer<typeof EvalCaseSchema>;

/** One fixture page: its HTML (or other body), and how long it waits before answering. */
export const FixturePageSchema = z.strictObject({
  body: z.string(),
  content_type: z.string().min(1).default('text/html; charset=utf-8'),
  /** Milliseconds before the answer (a slow page: a followup or a steer lands during its fetch). */
  delay_ms: z.number().int().min(0).max(120_000).default(0),
});
export type FixturePage = z.infer<typeof FixturePageSchema>;

export const EvalSuiteSchema = z.strictObject({
  description: z.string().optional(),
  agent: Slug.optional(),
  model: ModelConfigSchema.optional(),
  /** The judge model for rubrics (default: the case's model). */
  judge: ModelConfigSchema.optional(),
  trials: z.number().int().positive().max(100).default(1),
  /** Pages the eval run serves itself (`{{fixtures}}/<path>` in prompts and scripts), by path. */
  fixtures: z.record(z.string().regex(/^\/[\w./-]*$/, 'a path such as /refunds'), FixturePageSchema).optional(),
  cases: z.array(EvalCaseSchema).min(1),
});
export type EvalSuite = z.infer<typeof EvalSuiteSchema>;

/** A bad suite: the message names the file, the case (by id when it has one) and the field. */
export class SuiteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SuiteError';
  }
}

/** Parses a suite file's text (YAML or JSON). */
export function parseSuite(text: string, file: string): EvalSuite {
  const doc = parseDocument(text, { prettyErrors: true });
  const problems = [...doc.errors, ...doc.warnings];
  if (problems.length > 0)
    throw new SuiteError(
      `${file}: ${problems[0]!.message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`,
    );
  const raw: unknown = doc.toJS();
  const parsed = EvalSuiteSchema.safeParse(raw);
  if (parsed.success) {
    const seen = new Set<string>();
    for (const c of parsed.data.cases) {
      if (seen.has(c.id)) throw new SuiteError(`${file}: case "${c.id}": id is used twice`);
      seen.add(c.id);
    }
    return parsed.data;
  }
  // One line per case, naming it by id: `file: case "writes-notes": expect.tools.match: …`.
  const cases = (raw as { cases?: unknown[] } | null)?.cases;
  const byCase = new Map<string, typeof parsed.error.issues>();
  for (const issue of parsed.error.issues) {
    const [head, index, ...rest] = issue.path;
    let where = '';
    let path = issue.path;
    if (head === 'cases' && typeof index === 'number') {
      const id = (cases?.[index] as { id?: unknown } | undefined)?.id;
      where = typeof id === 'string' ? `case "${id}"` : `case ${index + 1}`;
      path = rest;
    }
    byCase.set(where, [...(byCase.get(where) ?? []), { ...issue, path }]);
  }
  const lines = [...byCase].map(([where, issues]) => (where ? `${where}: ` : '') + formatZodError(issues));
  throw new SuiteError(`${file}: ${lines.join('; ')}`);
}

/** A turn spec as an object. */
export function turnOf(spec: TurnSpec): Exclude<TurnSpec, string> {
  return typeof spec === 'string' ? { prompt: spec } : spec;
}

/** The trials of a case: the CLI's `--trials`, else the case's, else the suite's. */
export function trialsOf(suite: EvalSuite, c: EvalCase, override?: number): number {
  return override ?? c.trials ?? suite.trials;
}
