/** What `loadAgents` (./loader.ts) reads agents from, and what it checks them against (./checks.ts). */
export interface LoadAgentsOptions {
  /** The agents folder (else DREACT_AGENTS_DIR, else ./agents; only a named folder must exist); false: none, only `files`. */
  dir?: string | false;
  /** Agent files by path, beside the folder's (e.g. `dreact turn --agent ./support.yaml`). */
  files?: readonly string[];
  /**
   * Agents defined in code (a worker built with createWorker): objects checked exactly like a
   * file's content; their relative paths are relative to `cwd`. Errors name them `definitions[i]`.
   */
  definitions?: readonly unknown[];
  /** The worker's tool ids (its registry before the agents' modules), in registry order. */
  toolIds: readonly string[];
  /** Provider ids the worker resolves (default scripted, anthropic). */
  providers?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Loads a tool module by absolute path (default: ./module-loader.ts, `.ts` and `.js` alike). */
  importModule?: (specifier: string) => Promise<unknown>;
  /** Base of relative `dir` and `files` (default: the process's working directory). */
  cwd?: string;
}
