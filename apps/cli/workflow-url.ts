/** The Temporal UI page of a workflow, when the stack has a UI. */
export function workflowUrl(info: { uiUrl?: string; namespace: string }, workflowId: string): string | undefined {
  return info.uiUrl
    ? `${info.uiUrl}/namespaces/${encodeURIComponent(info.namespace)}/workflows/${encodeURIComponent(workflowId)}`
    : undefined;
}
