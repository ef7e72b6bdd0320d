/**
 * The activity of an MCP tool a server listed after the worker started. A worker registers its
 * activity types when it is created, so a tool added later (`notifications/tools/list_changed`,
 * or a server that was down at start) has no activity of its own: Temporal hands a task whose type
 * the worker does not know to the `default` activity, and this one runs it as the tool activity of
 * the declaration that names that type (`mcp__<server>__<tool>`) — the same idempotency, params
 * check, heartbeats and result append as a tool declared at start. Any other unknown type fails
 * like Temporal's own NotFoundError (retryable: another worker may have it).
 */
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { ToolInput, ToolOutcome } from '../../core/turn/activity-contracts';
import type { ActivityDeps } from '../deps';
import { makeToolActivity } from '../turn/tool-activity';

export function lateMcpToolActivity(deps: ActivityDeps): (input: ToolInput) => Promise<ToolOutcome> {
  return async function lateMcpTool(input: ToolInput): Promise<ToolOutcome> {
    const type = Context.current().info.activityType;
    const own = type.startsWith('mcp__')
      ? deps.tools.registry.ownActivities().find((a) => a.activity.name === type)
      : undefined;
    if (!own)
      throw ApplicationFailure.create({
        type: 'NotFoundError',
        message: `Activity function ${type} is not registered on this worker`,
      });
    return makeToolActivity(deps, (id) => (id === own.toolId ? deps.tools.impls.get(id) : undefined))(input);
  };
}
