/**
 * durable-react as an MCP server: an SDK `McpServer` whose tools are one more client of
 * `DreactClient` (client/api.ts) and of the gateway's stores, for one authenticated principal —
 * every conversation id is the caller's own (core/tenancy/conversation-space.ts) and a conversation
 * it may not see reads as absent, exactly as on the HTTP routes.
 *
 * Tools: `start_turn` (and wait for its answer, with progress notifications from the live stream),
 * `wait_turn`, `steer`, `list_conversations`, `read_timeline`, `read` (logical paths, resolved as react.read resolves
 * them: apps/mcp-server/read.ts) and `search_memory` (the lexical memory search); resources (resources.ts), prompts (prompts.ts).
 * Waiting for an answer: wait.ts. Built per stateless request, or once per MCP session
 * (apps/gateway/mcp-sessions.ts): only a session's server offers `resources/subscribe`
 * (subscriptions.ts) and wires `cancelTurn` (a stateless request's cancellation cannot be
 * correlated: it arrives on another request, to another server).
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { DreactError, type DreactClient } from '../../client/api';
import { hasScope, type KeyScope, type Principal } from '../../core/tenancy/principal';
import { clientConversationId, scopeConversationId } from '../../core/tenancy/conversation-space';
import { canSee, claimConversation, conversationOwner } from '../../store/tenancy-store';
import { checkTurnStart } from '../gateway/turn-check';
import { ConversationFailure, publicText, toolFailure } from './errors';
import { listConversations } from '../../store/conversation-list-store';
import { loadStreamSeq } from '../../store/conversation-store';
import { loadBlocks } from '../../store/timeline-store';
import type { StreamNotifier } from '../../store/stream-bus';
import { readConversationPaths, searchConversationMemory } from './read';
import { registerConversationResources } from './resources';
import { registerAgentPrompts } from './prompts';
import { ConversationIdParam, Text } from './params';
import { registerResourceSubscriptions } from './subscriptions';
import { waitForAnswer, type WaitExtra, type WaitTarget } from './wait';
import { registerApprovalTools } from './approvals';

export interface DreactMcpOptions {
  client: DreactClient;
  pool: Pool;
  principal: Principal;
  /** The gateway's shared LISTEN connection (else the stream is polled). */
  notifier?: StreamNotifier;
  /** Longest wait for an answer (default 10 min). */
  maxWaitMs?: number;
  /**
   * Cancels a turn (the gateway's session: DreactClient.cancel): called when the client cancels a
   * waiting `start_turn` (`notifications/cancelled` aborts its signal). Absent, the wait only stops
   * and the turn runs on. A cancelled `wait_turn` never calls it.
   */
  cancelTurn?: (conversationId: string, turnIndex: number) => Promise<void>;
  /**
   * A session's server (it outlives one request): `resources/subscribe` is offered and advertised.
   * Absent (stateless), `subscribe` is advertised false and answered "method not found".
   */
  subscriptions?: { coalesceMs?: number };
  /** Where an internal error's details go (the client sees the project's own message). */
  logger?: Logger;
  /** Approval forms (elicitation, approvals.ts): how long one waits for its answer. */
  approvals?: { elicitTimeoutMs?: number };
}

const TEXT_CAP = 4_000;

export function createDreactMcpServer(o: DreactMcpOptions): McpServer {
  const { client, pool, principal } = o;
  const server = new McpServer(
    { name: 'durable-react', version: '1.0.0' },
    {
      instructions: 'durable-react: durable agent conversations. Start a turn and wait for its answer.',
      // logging/setLevel is answered by the SDK; a turn's phases are sent as `info` log messages on
      // its request's stream (a level holds for the session; stateless, for the request that set it).
      capabilities: { logging: {} },
    },
  );
  const need = (scope: KeyScope) => {
    if (!hasScope(principal, scope)) throw new DreactError(`this API key lacks the "${scope}" scope`, 'bad_input');
  };
  const shown = (id: string) => clientConversationId(principal, id);
  /** A tool body whose failures become `isError` results in the project's words (errors.ts). */
  const guarded =
    <A, E>(fn: (args: A, extra: E) => Promise<CallToolResult>) =>
    async (args: A, extra: E): Promise<CallToolResult> => {
      try {
        return await fn(args, extra);
      } catch (err) {
        return toolFailure(err, principal, o.logger);
      }
    };
  /** The stored id of a conversation the caller sees (else "no conversation"). */
  const owned = async (clientId: string) => {
    const { id } = scopeConversationId(principal, clientId);
    for (const candidate of id === clientId ? [id] : [id, clientId]) {
      const owner = await conversationOwner(pool, candidate);
      if (owner && canSee(principal, owner)) return candidate;
    }
    throw new DreactError(`no conversation "${clientId}"`, 'not_found');
  };

  // list_approvals, decide_tool_call; a waited turn's approval requests (approvals.ts).
  const approvals = registerApprovalTools(server, {
    client,
    pool,
    principal,
    owned,
    ...(o.logger ? { logger: o.logger } : {}),
    ...o.approvals,
  });
  const wait = (target: WaitTarget, extra: WaitExtra) => waitForAnswer({ ...o, approvals }, target, extra);

  const answer = (r: { conversationId: string; turnIndex: number; answer: string; completionPath: string }) =>
    ok(r.answer, {
      conversation_id: shown(r.conversationId),
      turn_index: r.turnIndex,
      completion_path: r.completionPath,
      answer: r.answer,
    });

  server.registerTool(
    'start_turn',
    {
      description:
        'Sends a prompt as the next turn of a conversation (a new one when conversation_id is absent or new) and, unless wait is false, waits for the answer, reporting progress.',
      inputSchema: {
        prompt: Text(64_000),
        conversation_id: ConversationIdParam.optional(),
        wait: z.boolean().default(true).describe('Wait for the answer (default true).'),
        agent: Text(64)
          .optional()
          .describe("The agent a new conversation runs under (default: the conversation's, else default)."),
      },
    },
    guarded(async ({ prompt, conversation_id, wait: doWait, agent }, extra) => {
      need('write');
      const clientId = conversation_id ?? `mcp-${randomUUID()}`;
      const scoped = scopeConversationId(principal, clientId);
      const existing = await conversationOwner(pool, scoped.id);
      if ((existing && !canSee(principal, existing)) || (!existing && !scoped.mayCreate))
        throw new DreactError(`no conversation "${clientId}"`, 'not_found');
      const messageId = `msg_${randomUUID()}`;
      // Everything checked before anything is written (turn-check.ts, as POST …/turns does).
      // A refused start of a new conversation leaves nothing behind; its answer names the id only
      // when the caller chose it (a generated one names nothing that exists).
      await checkTurnStart(client, pool, principal, { conversationId: scoped.id, prompt, messageId, agent }).catch(
        (err: unknown) => {
          if (existing) throw new ConversationFailure(scoped.id, err);
          const refused =
            err instanceof DreactError ? new DreactError(`${err.message} (nothing was created)`, err.code) : err;
          throw conversation_id !== undefined ? new ConversationFailure(scoped.id, refused) : refused;
        },
      );
      if (!existing) {
        const owner = await claimConversation(pool, scoped.id, {
          tenantId: principal.tenantId,
          projectId: principal.projectId,
          userId: principal.userId,
        });
        if (!canSee(principal, owner)) throw new DreactError(`no conversation "${clientId}"`, 'not_found');
      }
      const after = await loadStreamSeq(pool, scoped.id);
      const started = await client
        .startTurn(scoped.id, prompt, {}, messageId, undefined, principal, agent)
        .catch((err: unknown) => {
          throw new ConversationFailure(scoped.id, err);
        });
      if (!doWait)
        return ok(`turn ${started.turnIndex} of ${shown(scoped.id)} started`, {
          conversation_id: shown(scoped.id),
          turn_index: started.turnIndex,
          stream_after: after,
        });
      return answer(
        await wait(
          { id: scoped.id, turnIndex: started.turnIndex, turnId: started.turnId, after, cancelOnAbort: true },
          extra as WaitExtra,
        ),
      );
    }),
  );

  server.registerTool(
    'wait_turn',
    {
      description: "Waits for a turn's answer (progress from its live stream).",
      inputSchema: { conversation_id: ConversationIdParam, turn_index: z.number().int().min(1) },
    },
    guarded(async ({ conversation_id, turn_index }, extra) => {
      need('read');
      const id = await owned(conversation_id);
      const after = await loadStreamSeq(pool, id);
      // Cancelled, it stops waiting only: the turn runs on.
      const target = { id, turnIndex: turn_index, turnId: `turn_${turn_index}`, after, cancelOnAbort: false };
      return answer(await wait(target, extra as WaitExtra));
    }),
  );

  server.registerTool(
    'steer',
    {
      description:
        'Steers the running turn of a conversation: it stops its work and answers now, with this text in mind.',
      inputSchema: { conversation_id: ConversationIdParam, text: Text(64_000) },
    },
    guarded(async ({ conversation_id, text }) => {
      need('write');
      const id = await owned(conversation_id);
      const r = await client.steer(id, text);
      // The turn it reached by number (its workflow id holds the stored, tenant-scoped id).
      const turn = /\/turn\/(\d+)$/.exec(r.routedTo ?? '')?.[1];
      return ok(publicText(principal, `steered ${conversation_id}${turn ? ` (turn ${turn})` : ''}`), {
        conversation_id,
        ...(turn ? { turn_index: Number(turn) } : {}),
      });
    }),
  );

  server.registerTool(
    'list_conversations',
    {
      description: "The caller's conversations, most recent first.",
      inputSchema: { limit: z.number().int().min(1).max(100).default(20) },
      annotations: { readOnlyHint: true },
    },
    guarded(async ({ limit }) => {
      need('read');
      const rows = await listConversations(
        pool,
        { tenantId: principal.tenantId, projectId: principal.projectId, userId: principal.userId },
        { limit },
      );
      const conversations = rows.map((r) => ({ ...r, id: shown(r.id) }));
      return ok(JSON.stringify(conversations, null, 1), { conversations });
    }),
  );

  server.registerTool(
    'read_timeline',
    {
      description:
        "A conversation's timeline blocks (type, turn, path, text cut to 4 000 characters), the last `limit`.",
      inputSchema: { conversation_id: ConversationIdParam, limit: z.number().int().min(1).max(500).default(50) },
      annotations: { readOnlyHint: true },
    },
    guarded(async ({ conversation_id, limit }) => {
      need('read');
      const id = await owned(conversation_id);
      const blocks = (await loadBlocks(pool, id))
        .filter((b) => !b.hidden)
        .slice(-limit)
        .map((b) => ({
          id: b.id,
          type: b.type,
          turn_id: b.turn_id,
          ...(b.path ? { path: b.path } : {}),
          ...(b.text !== undefined ? { text: cap(b.text) } : {}),
        }));
      return ok(JSON.stringify(blocks, null, 1), { conversation_id, blocks });
    }),
  );

  server.registerTool(
    'read',
    {
      description: 'Reads logical paths of a conversation, as react.read names them (fi:, tc:, ar:, so:, su:, ws:).',
      inputSchema: {
        conversation_id: ConversationIdParam,
        paths: z.array(Text(2_000)).min(1).max(20),
      },
      annotations: { readOnlyHint: true },
    },
    guarded(async ({ conversation_id, paths }) => {
      need('read');
      const reads = await readConversationPaths(pool, await owned(conversation_id), paths);
      const text = reads.map((r) =>
        r.status === 'ok' ? `[${r.canonical}]\n${r.text}` : `[${r.path}] ${r.status}${r.error ? `: ${r.error}` : ''}`,
      );
      return {
        content: [{ type: 'text', text: text.join('\n\n') }],
        structuredContent: { reads },
        ...(reads.every((r) => r.status !== 'ok') ? { isError: true } : {}),
      };
    }),
  );

  server.registerTool(
    'search_memory',
    {
      description:
        "Searches a conversation's memory (lexical, as react.memsearch): earlier answers, prompts, attachments, summaries.",
      inputSchema: {
        conversation_id: ConversationIdParam,
        query: Text(2_000),
        top_k: z.number().int().min(1).max(50).default(5),
      },
      annotations: { readOnlyHint: true },
    },
    guarded(async ({ conversation_id, query, top_k }) => {
      need('read');
      const hits = await searchConversationMemory(pool, await owned(conversation_id), query, top_k);
      return ok(JSON.stringify(hits, null, 1), { hits });
    }),
  );

  registerConversationResources(server, { pool, principal, owned, shown, need });
  registerAgentPrompts(server, pool, principal);

  // The SDK advertises `tools.listChanged: true` once a tool is registered; this server's tools are
  // fixed, it never sends the notification, so it does not promise it.
  server.server.registerCapabilities({
    tools: { listChanged: false },
    resources: { listChanged: false, subscribe: false },
  });
  if (o.subscriptions)
    registerResourceSubscriptions(server, {
      pool,
      ...(o.notifier ? { notifier: o.notifier } : {}),
      owned,
      need,
      ...o.subscriptions,
    });
  return server;
}

function ok(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

const cap = (t: string) => (t.length > TEXT_CAP ? `${t.slice(0, TEXT_CAP)}…[${t.length} characters]` : t);
