/**
 * An agent's secrets: names mapped to an environment variable or a file, resolved on the worker
 * when the agents load (a missing one stops the start), handed to tools by name. The values never
 * leave the worker process: they are not part of the definition, its hash, the timeline, history
 * or logs — `SecretValues` prints as its names only (JSON, util.inspect, template strings).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import type { SecretSource } from '../../core/agents/definition';

export class SecretValues {
  readonly #values: ReadonlyMap<string, string>;

  constructor(values: ReadonlyMap<string, string> = new Map()) {
    this.#values = values;
  }

  /** The secret's value; throws (naming only the secret) when the agent declares no such secret. */
  get(name: string): string {
    const v = this.#values.get(name);
    if (v === undefined)
      throw new Error(
        `secret ${JSON.stringify(name)} is not declared by this agent (declared: ${this.names().join(', ') || 'none'})`,
      );
    return v;
  }

  has(name: string): boolean {
    return this.#values.has(name);
  }

  names(): string[] {
    return [...this.#values.keys()].sort();
  }

  toJSON(): string {
    return this.toString();
  }

  toString(): string {
    return `[secrets: ${this.names().join(', ') || 'none'}]`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

export type SecretResolution = { ok: true; value: string } | { ok: false; reason: string };

/** One secret's value: the environment variable (non-empty) or the file's text, trailing newline dropped. */
export function resolveSecret(source: SecretSource, baseDir: string, env: NodeJS.ProcessEnv): SecretResolution {
  if ('env' in source) {
    const v = env[source.env];
    return v ? { ok: true, value: v } : { ok: false, reason: `environment variable ${source.env} is not set` };
  }
  const file = path.resolve(baseDir, source.file);
  try {
    return { ok: true, value: readFileSync(file, 'utf8').replace(/\r?\n$/, '') };
  } catch (err) {
    return { ok: false, reason: `file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
}
