/**
 * The decision every caller of a tool goes through, over a resolved governance (the agent's
 * tools, the tenant's policy, the approval rules): refused, invalid params, or the validated params
 * and the approval the call needs. `callGovernance` (./round-tools.ts) resolves it for a turn now;
 * the exec proxy builds one over its own registry.
 */
import type { ToolRegistry } from '../../core/tools/registry';
import type { ApprovalSpec } from '../../core/governance/approval';
import { toolCallRefusal, type ToolCallGovernance, type ToolCallRefusal } from '../../core/governance/tool-call';
import { checkToolParams, type ToolParamsCheck } from '../tools';

/** What the governance decides of one call (`CallGovernance.check`). */
export type GovernedCall =
  | { refused: ToolCallRefusal }
  | { invalid: Extract<ToolParamsCheck, { ok: false }> }
  | { params: Record<string, unknown>; approval?: ApprovalSpec };

export interface CallGovernance {
  /** The agent's tools the policy allows now, with the approval rules (what the exec proxy offers from). */
  registry: ToolRegistry;
  /**
   * One call: refused (a tool the agent does not have, or the policy refuses), invalid params, or
   * the validated params and the approval the call needs (undefined: none).
   */
  check(toolId: string, rawParams: unknown): GovernedCall;
}

/** The decision over a resolved governance (a registry without a tenant: `governanceOf` of it with NO_POLICY). */
export function governanceOf(g: ToolCallGovernance): CallGovernance {
  return {
    registry: g.governed,
    check(toolId, rawParams) {
      const refused = toolCallRefusal(g, toolId);
      if (refused) return { refused };
      const checked = checkToolParams(g.governed, toolId, rawParams ?? {});
      if (!checked.ok) return { invalid: checked };
      const approval = g.governed.approvalFor(toolId, checked.params);
      return { params: checked.params, ...(approval ? { approval } : {}) };
    },
  };
}
