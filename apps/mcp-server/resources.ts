/**
 * A conversation's timeline, workspace files and canvases as MCP resources under `dreact://`
 * (resource templates, listed and read), for one principal: the conversations listed are the
 * caller's (store/conversation-list-store.ts) and a conversation it may not see reads as absent
 * (`owned`, as on the HTTP routes). Completion offers the caller's conversation ids and a
 * conversation's file paths / canvas names. Ids shown are the client's (never a stored `~` id).
 *
 * Subscriptions (`resources/subscribe` of these uris) are a session's: subscriptions.ts, offered
 * only by a session's server (apps/gateway/mcp-sessions.ts) — a stateless request has no channel
 * a `notifications/resources/updated` could be sent on after it was answered.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Pool } from 'pg';
import type { Principal } from '../../core/tenancy/principal';
import { listConversations } from '../../store/conversation-list-store';
import { FILE_ARTIFACT_KIND, getArtifact, listArtifacts, loadBlocks } from '../../store/timeline-store';
import { compositeCanvases } from '../../store/turn-display-store';
import { DreactError } from '../../client/api';

export interface ResourceScope {
  pool: Pool;
  principal: Principal;
  /** The stored id of a conversation the caller sees (else a not-found error). */
  owned(clientId: string): Promise<string>;
  /** The id a client sees for a stored id. */
  shown(id: string): string;
  /** Throws unless the key has the scope. */
  need(scope: 'read'): void;
}

const TEXT_CAP = 50_000;
const cap = (t: string) => (t.length > TEXT_CAP ? `${t.slice(0, TEXT_CAP)}…[${t.length} characters]` : t);
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? '';
const canvasName = (c: { turnId: string; instance: number }) => `${c.turnId}.${c.instance}`;

export function registerConversationResources(server: McpServer, s: ResourceScope): void {
  const mine = async () => {
    s.need('read');
    const { tenantId, projectId, userId } = s.principal;
    return (await listConversations(s.pool, { tenantId, projectId, userId }, { limit: 50 })).map((r) => ({
      id: r.id,
      shown: s.shown(r.id),
    }));
  };
  const completeIds = async (value: string) => (await mine()).map((c) => c.shown).filter((id) => id.startsWith(value));
  const convArg = (v: Record<string, string | string[]>) => one(v.id);

  server.registerResource(
    'timeline',
    new ResourceTemplate('dreact://conversations/{id}/timeline', {
      list: async () => ({
        resources: (await mine()).map((c) => ({
          uri: `dreact://conversations/${encodeURIComponent(c.shown)}/timeline`,
          name: `${c.shown} timeline`,
          mimeType: 'application/json',
        })),
      }),
      complete: { id: completeIds },
    }),
    {
      title: 'Conversation timeline',
      description: "A conversation's visible timeline blocks (type, turn, path, text), oldest first.",
      mimeType: 'application/json',
    },
    async (uri, v) => {
      s.need('read');
      const id = await s.owned(decodeURIComponent(convArg(v)));
      const blocks = (await loadBlocks(s.pool, id))
        .filter((b) => !b.hidden)
        .map((b) => ({
          type: b.type,
          turn_id: b.turn_id,
          ...(b.path ? { path: b.path } : {}),
          ...(b.text !== undefined ? { text: cap(b.text) } : {}),
        }));
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(blocks, null, 1) }] };
    },
  );

  server.registerResource(
    'file',
    new ResourceTemplate('dreact://conversations/{id}/files/{+path}', {
      list: async () => {
        const resources = [];
        for (const c of await mine())
          for (const f of await listArtifacts(s.pool, c.id, FILE_ARTIFACT_KIND))
            resources.push({
              uri: `dreact://conversations/${encodeURIComponent(c.shown)}/files/${f.key}`,
              name: `${c.shown}: ${f.key}`,
              mimeType: f.mime,
              size: f.sizeBytes,
            });
        return { resources };
      },
      complete: {
        id: completeIds,
        path: async (value, ctx) => {
          const conv = ctx?.arguments?.id;
          if (!conv) return [];
          const id = await s.owned(conv);
          return (await listArtifacts(s.pool, id, FILE_ARTIFACT_KIND, value)).map((f) => f.key);
        },
      },
    }),
    { title: 'Workspace file', description: "A file of a conversation's workspace (react.write's files)." },
    async (uri, v) => {
      s.need('read');
      const id = await s.owned(decodeURIComponent(convArg(v)));
      const path = one(v.path);
      const file = await getArtifact(s.pool, id, FILE_ARTIFACT_KIND, path);
      if (!file) throw new DreactError(`no file "${path}" in conversation "${convArg(v)}"`, 'not_found');
      const mimeType = file.mime ?? 'application/octet-stream';
      if (file.content !== undefined) return { contents: [{ uri: uri.href, mimeType, text: file.content }] };
      return { contents: [{ uri: uri.href, mimeType, blob: (file.bytes ?? Buffer.alloc(0)).toString('base64') }] };
    },
  );

  server.registerResource(
    'canvas',
    new ResourceTemplate('dreact://conversations/{id}/canvases/{name}', {
      list: async () => {
        const resources = [];
        for (const c of await mine())
          for (const canvas of await compositeCanvases(s.pool, c.id))
            resources.push({
              uri: `dreact://conversations/${encodeURIComponent(c.shown)}/canvases/${canvasName(canvas)}`,
              name: `${c.shown} canvas ${canvasName(canvas)}`,
              mimeType: 'application/json',
            });
        return { resources };
      },
      complete: {
        id: completeIds,
        name: async (value, ctx) => {
          const conv = ctx?.arguments?.id;
          if (!conv) return [];
          const names = (await compositeCanvases(s.pool, await s.owned(conv))).map(canvasName);
          return names.filter((n) => n.startsWith(value));
        },
      },
    }),
    {
      title: 'Canvas',
      description: 'A JSON canvas a turn streamed (`<turn>.<instance>`), its top-level attributes folded.',
      mimeType: 'application/json',
    },
    async (uri, v) => {
      s.need('read');
      const id = await s.owned(decodeURIComponent(convArg(v)));
      const name = one(v.name);
      const canvas = (await compositeCanvases(s.pool, id)).find((c) => canvasName(c) === name);
      if (!canvas) throw new DreactError(`no canvas "${name}" in conversation "${convArg(v)}"`, 'not_found');
      const text = JSON.stringify(Object.fromEntries(canvas.attributes), null, 1);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text }] };
    },
  );
}
