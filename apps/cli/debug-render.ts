/**
 * `dreact timeline --debug`: the model's view of the timeline with cache checkpoints marked `=>[n]`,
 * rendered with the conversation's agent — the version its latest turn ran (the turn header's
 * `agent_hash`, stored in `agent_versions` by the worker that loaded it): its instructions lead the
 * system prompt, its tools make the catalogue, its multi-action mode applies. Tools of the version
 * this process does not implement (tool modules, MCP tools) are named under the render.
 */
import type { Block } from '../../core/timeline/block';
import { renderTimeline } from '../../core/timeline/render';
import { createToolRegistry, restrictRegistry } from '../../core/tools';
import { systemPromptFor } from '../../core/decision/prompt';

/** What the render needs of an agent version (store/agent-store.ts AgentVersionRow). */
export interface DebugAgent {
  name: string;
  hash: string;
  definition: Record<string, unknown>;
  tools: readonly string[];
}

/** The agent version the conversation's latest turn ran, as its header records it. */
export function latestTurnAgent(blocks: readonly Block[]): { name: string; hash: string } | undefined {
  const header = [...blocks].reverse().find((b) => b.type === 'turn.header');
  const name = header?.meta['agent'];
  const hash = header?.meta['agent_hash'];
  return typeof name === 'string' && typeof hash === 'string' ? { name, hash } : undefined;
}

export function debugRender(blocks: Block[], now = Date.now(), agent?: DebugAgent): string {
  const last = blocks[blocks.length - 1];
  if (!last) return '(empty timeline)';
  const all = createToolRegistry();
  const known = agent ? agent.tools.filter((id) => all.has(id)) : undefined;
  const registry = known ? restrictRegistry(all, known) : all;
  const multiAction = agent?.definition['multi_action'] === 'safe_fanout' ? 'safe_fanout' : 'off';
  const instructions = typeof agent?.definition['instructions'] === 'string' ? agent.definition['instructions'] : '';
  const out = renderTimeline(
    {
      blocks,
      currentTurnId: last.turn_id,
      systemPrompt: systemPromptFor(registry, multiAction, instructions),
      announce: { iteration: 1, maxIterations: 1 },
    },
    { now, debug: true },
  );
  const missing = agent ? agent.tools.filter((id) => !all.has(id)) : [];
  const lines = [
    out.debugText ?? '',
    '',
    `(${out.breakpoints} cache breakpoints: ${out.checkpoints.map((c) => `${c.kind}@${c.blockId}`).join(', ')})`,
    agent
      ? `(agent ${agent.name} ${agent.hash.slice(0, 12)}: ${agent.tools.length} tools${missing.length > 0 ? `; not in this render's catalogue (module or MCP tools, described by the worker): ${missing.join(', ')}` : ''})`
      : '(agent: the built-in default — no turn header names a stored agent version)',
  ];
  return lines.join('\n');
}
