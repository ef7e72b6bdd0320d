/** What activities need from the worker: the database, model providers and tools. */
import type { Db } from './store/db';
import type { ModelProvider } from '../core/model/provider';
import type { ModelConfig } from '../core/turn/contracts';
import type { ToolImpl } from './tools/types';

export interface ActivityDeps {
  db: Db;
  /** Resolves a turn's model config to a provider instance. */
  provider(config: ModelConfig): ModelProvider;
  /** Tool implementations by tool id. */
  tools: ReadonlyMap<string, ToolImpl>;
  /** Clock (injectable for tests). */
  now(): Date;
}
