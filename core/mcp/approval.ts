/**
 * Which MCP tool calls wait for a person (workflows/turn/approval-step.ts): a server's `approval`
 * setting in the agent file — `always`, `never`, or `destructive` (the default): the tools the
 * server annotates `destructiveHint: true` and not `readOnlyHint: true`. A tool without annotations
 * is not taken as destructive (the MCP spec's default for an absent hint is "may be destructive";
 * applying it would gate every unannotated tool — name such a server `approval: always`). Pure.
 */
export const MCP_APPROVAL_MODES = ['never', 'destructive', 'always'] as const;
export type McpApprovalMode = (typeof MCP_APPROVAL_MODES)[number];

export interface McpToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
}

export function mcpNeedsApproval(
  mode: McpApprovalMode | undefined,
  annotations: McpToolAnnotations | undefined,
): boolean {
  switch (mode ?? 'destructive') {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'destructive':
      return annotations?.destructiveHint === true && annotations.readOnlyHint !== true;
  }
}
