/**
 * Canvases of the web chat (issue 32).
 *
 * `GET /canvas-frame.html` — the frame an HTML canvas runs in. The chat's page forbids inline
 * script (`default-src 'self'`), and a `srcdoc` frame inherits that policy, so a canvas's own
 * script never ran. This frame has its own policy: the document is sandboxed by its CSP
 * (`sandbox allow-scripts`: an opaque origin even when opened on its own — no cookies, no storage,
 * no access to the chat page or its API key), inline script and style run, nothing is fetched
 * (`default-src 'none'`: no request to the API or anywhere else; images and fonts only as data:
 * or blob: URLs), no WebRTC (canvas-frame.ts: the interfaces removed, no nested frame with a script
 * of its own), and only a page of this origin may frame it. Its one script waits for the
 * canvas HTML from the frame's parent (postMessage) and writes it as the frame's document; the
 * chat (apps/web/components/canvas.tsx) frames it with `sandbox="allow-scripts"` and posts the
 * HTML once per version. The frame is static: the canvas HTML never reaches the gateway.
 *
 * `GET /v1/conversations/:id/canvases` — what a client needs besides the timeline to rebuild the
 * canvases a turn streamed: the composite JSON canvases, folded from their stored `attribute`
 * events (store/turn-display-store.ts), and the text of files react.patch streamed (its call holds
 * only the diff). Scoped like every conversation route (another tenant's: 404).
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import type { Block } from '../../core/timeline/block';
import { getArtifact } from '../../store/artifact-store';
import { loadBlocks } from '../../store/timeline-store';
import { compositeCanvases } from '../../store/turn-display-store';
import { conversationId, need, ownedConversation, shownId, type GatewayEnv } from './http';
import { CANVAS_FRAME_CSP, CANVAS_FRAME_HTML } from './canvas-frame';

export function registerCanvasRoutes(app: Hono<GatewayEnv>, pool: Pool): void {
  app.get('/canvas-frame.html', (c) => {
    c.header('content-type', 'text/html; charset=utf-8');
    c.header('content-security-policy', CANVAS_FRAME_CSP);
    c.header('cache-control', 'no-cache');
    c.header('cross-origin-resource-policy', 'same-origin');
    return c.body(CANVAS_FRAME_HTML);
  });

  app.get('/v1/conversations/:id/canvases', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const [composites, blocks] = await Promise.all([compositeCanvases(pool, id), loadBlocks(pool, id)]);
    return c.json({ conversationId: shownId(c, id), composites, patched: await patchedCanvases(pool, id, blocks) });
  });
}

/**
 * The files react.patch streamed as canvases, with their stored text: a patch's call holds only
 * the diff (a write's call holds the whole text, which the client reads from the timeline).
 */
async function patchedCanvases(
  pool: Pool,
  id: string,
  blocks: readonly Block[],
): Promise<Array<{ artifact: string; mime: string; content: string }>> {
  const keys = new Set<string>();
  for (const b of blocks)
    if (
      b.type === 'react.tool.result' &&
      b.meta.tool_id === 'react.patch' &&
      b.meta.ok !== false &&
      (b.meta.channel === 'canvas' || b.meta.channel === 'timeline_text') &&
      typeof b.meta.artifact === 'string'
    )
      keys.add(b.meta.artifact);
  const files = await Promise.all([...keys].map((key) => getArtifact(pool, id, 'file', key)));
  return files.flatMap((f) =>
    f && f.content !== undefined ? [{ artifact: f.key, mime: f.mime ?? 'text/markdown', content: f.content }] : [],
  );
}
