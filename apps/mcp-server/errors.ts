/**
 * What an MCP client reads of a failed tool call: the project's own message (a DreactError's, with
 * the caller's conversation ids as the caller names them — never the stored, tenant-scoped
 * `t1~p1~…` form), the conversation it concerns when there is one, and for anything else (a
 * driver's or an SDK's error: Postgres' `invalid byte sequence…`, a Temporal status) one message
 * of ours — the details go to the gateway log.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { DreactError } from '../../client/api';
import type { Principal } from '../../core/tenancy/principal';
import { clientConversationId, conversationSpace } from '../../core/tenancy/conversation-space';

/** A failure of a tool call about one conversation (its stored id). */
export class ConversationFailure extends Error {
  constructor(
    readonly conversationId: string,
    readonly reason: unknown,
  ) {
    super(reason instanceof Error ? reason.message : String(reason));
    this.name = 'ConversationFailure';
  }
}

/** `text` with the caller's stored ids written as the caller names them. */
export function publicText(principal: Principal, text: string): string {
  const space = conversationSpace(principal);
  return space ? text.split(space).join('') : text;
}

/** The `isError` result of a failed tool call. */
export function toolFailure(err: unknown, principal: Principal, logger?: Logger): CallToolResult {
  const conversationId = err instanceof ConversationFailure ? err.conversationId : undefined;
  const reason = err instanceof ConversationFailure ? err.reason : err;
  let code: string;
  let message: string;
  if (reason instanceof DreactError) {
    code = reason.code;
    message = publicText(principal, reason.message);
  } else {
    code = 'internal';
    const name = reason instanceof Error ? reason.name : typeof reason;
    logger?.error({ err: reason, conversationId, tenant: principal.tenantId, key: principal.keyId }, 'MCP tool failed');
    message = `internal error (${name}); the gateway log has the details`;
  }
  const shown = conversationId !== undefined ? clientConversationId(principal, conversationId) : undefined;
  return {
    isError: true,
    content: [{ type: 'text', text: shown !== undefined ? `conversation ${shown}: ${message}` : message }],
    structuredContent: { error: { code, message }, ...(shown !== undefined ? { conversation_id: shown } : {}) },
  };
}
