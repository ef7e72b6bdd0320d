/**
 * One governance decision for every caller of a tool (issue 36): the model's call (the tool
 * activity), generated code through the exec proxy (activities/exec/proxy/supervisor.ts), a
 * subagent's call (its own turn's tool activity) and MCP tool calls (which are tool calls like any)
 * are all decided here, in this order:
 *
 * 1. the agent's tools (its allow-list, its own MCP servers): another tool is unknown;
 * 2. the tenant's and the project's policy: a denied tool, or one outside an allow list, is refused;
 * 3. approval: the tool's declaration (`needsApproval`, an MCP server's destructiveHint rule), the
 *    agent's `approval.tools`, the policy's require-approval list (ToolRegistry.approvalFor over the
 *    governed registry, core/governance/policy.ts governRegistry).
 *
 * The model's calls that need approval were planned with it (the round used the same governed
 * registry), so the turn waits for the person before the activity runs. A program in the sandbox
 * cannot wait for a person: its call is refused with `approvalRefusal`'s observation, and it may ask
 * for the call as a tool call of its own. Pure.
 */
import { policyRefusal, type EffectivePolicy } from './policy';
import type { ApprovalSpec } from './approval';
import type { ToolRegistry } from '../tools/registry';

/** Why a call is not run: the agent does not have the tool, the policy refuses it, it needs a person. */
export type ToolCallRefusalKind = 'unknown' | 'policy' | 'approval';

export interface ToolCallRefusal {
  kind: ToolCallRefusalKind;
  /** The observation the caller gets (and the timeline records). */
  text: string;
}

export interface ToolCallGovernance {
  agentName: string;
  /** The agent's registry: its allow-list and its own MCP servers' tools. */
  agentTools: ToolRegistry;
  /** The agent's tools the policy allows, with the approval rules (governRegistry). */
  governed: ToolRegistry;
  policy: EffectivePolicy;
  /** Whether the worker has the tool at all (an unknown tool's observation says the agent lacks it). */
  workerHas?(toolId: string): boolean;
}

/** Why a call to `toolId` may not run at all (steps 1 and 2 above; undefined: it may, approval aside). */
export function toolCallRefusal(g: ToolCallGovernance, toolId: string): ToolCallRefusal | undefined {
  if (!g.agentTools.has(toolId))
    return {
      kind: 'unknown',
      text: `unknown tool "${toolId}"${g.workerHas?.(toolId) ? ` (agent ${g.agentName} does not have it)` : ''}. Available: ${g.governed.ids().join(', ')}`,
    };
  const refused = policyRefusal(g.policy, toolId);
  return refused ? { kind: 'policy', text: refused } : undefined;
}

const APPROVAL_SOURCES: Record<ApprovalSpec['source'], string> = {
  tool: "the tool's declaration",
  agent: "the agent's approval.tools",
  policy: "the tenant's tool policy",
};

/** The observation of a call that needs a person's approval but comes from a program that cannot wait. */
export function approvalRefusal(toolId: string, spec: ApprovalSpec): ToolCallRefusal {
  return {
    kind: 'approval',
    text: `${toolId} needs a person's approval (${APPROVAL_SOURCES[spec.source]}); ask for it as a tool call, not from code`,
  };
}
