/**
 * MCP tools as registry tools: each tool a connected server lists becomes the pair every tool is —
 * a declaration `mcp.<server>.<tool>` (description, params from its input JSON Schema through
 * `z.fromJSONSchema`, `exploration` when it says `readOnlyHint`) and an implementation that calls it
 * through the server's connection. A schema zod cannot take is reported at start and the tool is
 * not offered. A call waits for a person's approval when the server's `approval` setting says so
 * (core/mcp/approval.ts: by default, tools annotated `destructiveHint`).
 *
 * A call runs as an activity of its own type (`mcp__<server>__<tool>`, summary `mcp <server>.<tool>`)
 * inside the standard tool activity (activities/turn/tool-activity.ts): the params are checked
 * against the declaration before the call, it heartbeats while it waits (heartbeat timeout 15 s, so
 * a killed worker's call is retried within seconds), and the activity's cancellation signal is the
 * MCP request's signal (the SDK sends `notifications/cancelled`).
 *
 * Retries: calls are NOT assumed idempotent. Every attempt appends a hidden `stage.mcp.attempt`
 * block (`attempt` 1, 2, …) before it calls, and a result reached on attempt > 1 says so; a
 * transport error or timeout THROWS (retried under the tool's RetryPolicy: 3 attempts, or 1 with
 * `retries: false`); an `isError: true` result is an observation, never retried.
 */
import { recordMcpCall } from '../telemetry/metrics';
import { Context } from '@temporalio/activity';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { declareTool, type AnyToolDeclaration, type ToolRetryPolicy } from '../../core/tools/registry';
import { mcpParamsSchema } from '../../core/mcp/schema';
import { McpToolNames } from '../../core/mcp/names';
import { mcpNeedsApproval } from '../../core/mcp/approval';
import { makeBlock } from '../../core/timeline/block';
import type { ToolContext, ToolImpl, ToolObservation } from '../tools/types';
import type { McpConnection } from './connection';
import { McpNeedsLoginError } from '../../store/mcp-oauth/provider';
import { observationOf } from './result';

/** Heartbeat timeout of an MCP call's activity: a dead worker's call is retried after this. */
export const MCP_HEARTBEAT_TIMEOUT_MS = 15_000;
/** Start-to-close time beyond the MCP timeout (the MCP timeout fires first, with a clear error). */
const ACTIVITY_MARGIN_MS = 10_000;
export const MCP_ATTEMPT_BLOCK = 'stage.mcp.attempt';

export interface McpTool {
  declaration: AnyToolDeclaration;
  impl: ToolImpl;
}

export interface RejectedMcpTool {
  id: string;
  server: string;
  tool: string;
  reason: string;
}

export const mcpActivityName = (id: string) => id.replace(/^mcp\./, 'mcp__').replace(/\./g, '__');

/**
 * The registry tools of one connected server as it lists them now, and the ones refused (with the
 * reason). `names` is the server's id map, kept by the caller so that ids stay the same when the
 * list changes (a new name is added to it).
 */
export function mcpServerTools(
  conn: McpConnection,
  names: McpToolNames = new McpToolNames(conn.name, []),
): { tools: McpTool[]; rejected: RejectedMcpTool[] } {
  names.add(conn.tools.map((t) => t.name));
  const tools: McpTool[] = [];
  const rejected: RejectedMcpTool[] = [];
  for (const tool of conn.tools) {
    const id = names.id(tool.name);
    const schema = mcpParamsSchema(tool.inputSchema);
    if (!schema.ok) {
      rejected.push({ id, server: conn.name, tool: tool.name, reason: schema.reason });
      continue;
    }
    tools.push({ declaration: declaration(conn, tool, id, schema.params), impl: implementation(conn, tool.name, id) });
  }
  return { tools, rejected };
}

function declaration(conn: McpConnection, tool: Tool, id: string, params: AnyToolDeclaration['params']) {
  const timeoutMs = (conn.config.timeout_seconds ?? 60) * 1000;
  const retry: ToolRetryPolicy =
    conn.config.retries === false
      ? { maximumAttempts: 1 }
      : { maximumAttempts: 3, initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 10_000 };
  const summary = `mcp ${conn.name}.${tool.name}`;
  const description = [
    tool.description?.trim() || tool.title || tool.annotations?.title,
    `(MCP tool ${tool.name} of server ${conn.name})`,
  ]
    .filter(Boolean)
    .join(' ');
  return declareTool({
    id,
    description,
    params,
    strategy: tool.annotations?.readOnlyHint === true ? 'exploration' : 'unknown',
    // Decided when the call is planned (in history): the server's `approval` over the tool's hints.
    ...(mcpNeedsApproval(conn.config.approval, tool.annotations) ? { needsApproval: true } : {}),
    timeoutMs: timeoutMs + ACTIVITY_MARGIN_MS,
    retry,
    summarize: () => summary,
    activity: { name: mcpActivityName(id), heartbeatTimeoutMs: MCP_HEARTBEAT_TIMEOUT_MS },
  });
}

function implementation(conn: McpConnection, name: string, id: string): ToolImpl {
  return {
    id,
    async run(params: Record<string, unknown>, ctx: ToolContext): Promise<ToolObservation> {
      // In its own activity: the attempt is recorded before the call. Proxied from an exec sandbox,
      // the supervisor records the call itself (stage.exec.tool).
      const attempt = ownAttempt(id);
      if (attempt !== undefined)
        await ctx.store.appendBlocks([
          makeBlock({
            type: MCP_ATTEMPT_BLOCK,
            author: 'tool',
            turn_id: ctx.turnId,
            ts: ctx.now().toISOString(),
            key: `${ctx.callId}.${attempt}`,
            call_id: ctx.callId,
            hidden: true,
            text: `mcp ${conn.name}.${name} attempt ${attempt}`,
            meta: { tool_id: id, server: conn.name, tool: name, attempt },
          }),
        ]);
      // An OAuth server: the connection of the turn's tenant (and user), with their tokens.
      const target = conn.route ? await conn.route(ctx.conversationId) : conn;
      if (!conn.tools.some((t) => t.name === name))
        return {
          ok: false,
          text: `MCP server ${conn.name} no longer offers the tool ${name} (it was removed after this turn started); the call was not made`,
          meta: { mcp: { server: conn.name, tool: name, removed: true } },
        };
      let result;
      try {
        result = await target.callTool(name, params, {
          signal: ctx.signal,
          onProgress: () => ctx.heartbeat({ callId: ctx.callId, progress: true }),
        });
      } catch (err) {
        recordMcpCall(conn.name, 'failed');
        // No login (or tokens refused): one observation saying what to do — not a retry.
        if (err instanceof McpNeedsLoginError)
          return { ok: false, text: err.message, meta: { mcp: { server: conn.name, tool: name, needs_auth: true } } };
        throw err;
      }
      recordMcpCall(conn.name, result.isError ? 'error' : 'ok');
      const obs = await observationOf(result, {
        ctx,
        server: conn.name,
        tool: name,
        readResource: (uri) => target.readResource(uri, ctx.signal) as Promise<{ contents: Array<{ uri: string }> }>,
        redact: conn.redact,
      });
      if (attempt === undefined) return obs;
      return {
        ...obs,
        text:
          attempt > 1
            ? `${obs.text}\n[attempt ${attempt}: an earlier attempt did not finish and may have reached the server]`
            : obs.text,
        meta: { ...obs.meta, attempt },
      };
    },
  };
}

/** The activity's attempt when the call runs as its own activity; undefined elsewhere (the exec proxy, tests). */
function ownAttempt(id: string): number | undefined {
  try {
    const info = Context.current().info;
    return info.activityType === mcpActivityName(id) ? info.attempt : undefined;
  } catch {
    return undefined;
  }
}
