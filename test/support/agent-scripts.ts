/**
 * Agents whose model is the scripted one by script name (an agent file's `model.script`), for
 * tests of agents and subagents: `scriptedAgents(scripts)` is the worker's provider resolver, and
 * `agentFile(name, extra)` an agent file whose model runs the script of its own name.
 */
import { createScriptedProvider, resolveScript } from '../../activities/providers/scripted';
import type { ModelProvider } from '../../core/model/provider';
import type { ModelConfig, ScriptSpec } from '../../core/model/config';

export type Script = Partial<ScriptSpec> & { rounds: string[] };

/** The provider resolver: a script named in `scripts`, else the config's own (a built-in name or inline). */
export function scriptedAgents(scripts: Record<string, Script>): (cfg: ModelConfig) => ModelProvider {
  return (cfg) => {
    const named = typeof cfg.script === 'string' ? scripts[cfg.script] : undefined;
    return createScriptedProvider(resolveScript((named as ScriptSpec | undefined) ?? cfg.script));
  };
}

/**
 * An agent file (YAML) running the script `name`; `extra` adds lines, `modelFields` fields of its
 * model (`model: claude-haiku-4-5, max_tokens: 500`: a priced model, for spend caps).
 */
export const agentFile = (name: string, extra = '', modelFields?: string) =>
  `name: ${name}\ninstructions: You are the ${name} agent.\nmodel: { provider: scripted, script: ${name}${
    modelFields ? `, ${modelFields}` : ''
  } }\n${extra}`;
