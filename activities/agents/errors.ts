/**
 * Agent file errors: each problem names the FILE, the FIELD (a path such as `tools.allow[2]`) and
 * the RULE it broke, and the worker start stops with all of a load's problems at once.
 */
import type { z } from 'zod';
import { nearestAgentField } from '../../core/agents/field-suggestion';

export type AgentRule =
  | 'parse_error'
  | 'unknown_field'
  | 'invalid_value'
  | 'bad_glob'
  | 'bad_limit'
  | 'conflict'
  | 'duplicate'
  | 'unknown_tool'
  | 'duplicate_tool'
  | 'bad_module'
  | 'unknown_provider'
  | 'missing_file'
  | 'missing_secret'
  | 'name_mismatch'
  | 'duplicate_name'
  | 'unknown_subagent'
  | 'subagent_cycle';

export interface AgentIssue {
  file: string;
  /** Dotted path with [index] for list items; `(file)` for the file as a whole. */
  field: string;
  rule: AgentRule;
  message: string;
}

/** Renamed or commonly mistaken fields, with the hint an unknown-field error adds. */
const FIELD_HINTS: Readonly<Record<string, string>> = {
  max_iterations: 'max_rounds',
  iterations: 'max_rounds',
  maxRounds: 'max_rounds',
  contextMaxTokens: 'context_max_tokens',
  maxTokens: 'max_tokens',
  system_prompt: 'instructions',
  prompt: 'instructions',
  id: 'name',
};

export function issueLine(i: AgentIssue): string {
  return `${i.file}: ${i.field}: ${i.message} [${i.rule}]`;
}

export class AgentDefinitionError extends Error {
  override readonly name = 'AgentDefinitionError';
  readonly issues: readonly AgentIssue[];

  constructor(issues: readonly AgentIssue[]) {
    super(
      issues.length === 1
        ? `agent definition: ${issueLine(issues[0]!)}`
        : `agent definitions: ${issues.length} problems\n${issues.map((i) => `  ${issueLine(i)}`).join('\n')}`,
    );
    this.issues = issues;
  }
}

/** `['tools', 'allow', 2]` → `tools.allow[2]`; the empty path is the file's top level. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out || '(top level)';
}

/** A zod issue as agent issues (an unrecognized-keys issue becomes one per key). */
export function issuesFromZod(file: string, issue: z.core.$ZodIssue): AgentIssue[] {
  if (issue.code === 'invalid_union' && issue.errors.length) {
    // Either shape failed (an MCP server is stdio or HTTP): the one that came closest (fewest
    // issues, as core/validation.ts picks) names the field to fix, not "Invalid input" at its parent.
    const closest = [...issue.errors].sort((a, b) => a.length - b.length)[0]!;
    if (closest.length > 0)
      return closest.flatMap((i) =>
        issuesFromZod(file, { ...i, path: [...issue.path, ...i.path] } as z.core.$ZodIssue),
      );
  }
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => {
      const hint = FIELD_HINTS[key] ?? nearestAgentField(issue.path, key);
      return {
        file,
        field: fieldPath([...issue.path, key]),
        rule: 'unknown_field' as const,
        message: `unknown field ${JSON.stringify(key)}${hint ? ` (did you mean ${hint}?)` : ''}`,
      };
    });
  }
  const params = (issue as { params?: { rule?: AgentRule } }).params;
  const numeric =
    ((issue.code === 'too_small' || issue.code === 'too_big') && issue.origin === 'number') ||
    (issue.code === 'invalid_type' && (issue.expected === 'int' || issue.expected === 'number'));
  const rule: AgentRule = params?.rule ?? (numeric ? 'bad_limit' : 'invalid_value');
  return [{ file, field: fieldPath(issue.path), rule, message: issue.message }];
}
