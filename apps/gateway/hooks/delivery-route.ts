/**
 * `POST /v1/hooks/:id` — a signed webhook delivery starts a turn. No API key: the signature is the
 * authentication (core/hooks/signature.ts, the hook's preset), so this route is registered before
 * the gateway's key check and its failed-authentication limit (senders such as GitHub share their
 * addresses with everyone's hooks, so one bad hook must not refuse another's deliveries).
 *
 * In order, nothing written until the delivery is known good: the body (at most `maxBodyBytes`:
 * 413), the hook (404), the signature (401 naming what is wrong: missing, malformed, stale, not
 * matching — writes nothing), the JSON payload and its delivery id (400). A delivery seen before —
 * by its id, or by its very signature under another id — answers 200 with the turn it started and
 * starts nothing. Then the hook's rate limit (429 + Retry-After; only verified deliveries count),
 * the delivery recorded, the prompt rendered from the template (core/hooks/template.ts), the raw
 * payload attached as `payload.json`, and the turn started through the same path as
 * `POST /v1/conversations/:id/turns` (turn-start.ts): 202 with the conversation and turn. A turn
 * that cannot start forgets the delivery, so the sender's retry is processed afresh; the message
 * id and (per-delivery) conversation id derive from hook and delivery, so a retry can never start
 * a second turn.
 */
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Pool } from 'pg';
import type { AttachmentLimits } from '../../../core/attachments/policy';
import { deliveryConversationId, HookIdSchema } from '../../../core/hooks/hook';
import { deliveryIdOf, eventOf, HOOK_PRESETS } from '../../../core/hooks/presets';
import { verifySignature } from '../../../core/hooks/signature';
import { deliveryPrompt, renderTemplate } from '../../../core/hooks/template';
import type { Principal } from '../../../core/tenancy/principal';
import { clientConversationId, scopeConversationId } from '../../../core/tenancy/conversation-space';
import type { DreactClient } from '../../../client/api';
import {
  claimDelivery,
  earlierDelivery,
  forgetDelivery,
  hookForDelivery,
  hmacSha256Hex,
  hookSealKey,
  recordDeliveryTurn,
  sha256Hex,
  type DeliveryRow,
  type HookRow,
} from '../../../store/hooks/hook-store';
import { fail, type GatewayEnv } from '../http';
import { bucketLimit } from '../rate-limits';
import type { ModelPolicy } from '../turn-options';
import { startGatewayTurn } from '../turn-start';

/** Deliveries a hook may start per minute by default (DREACT_HOOK_RATE_LIMIT_PER_MINUTE). */
export const DEFAULT_HOOK_RATE_PER_MINUTE = 60;
/** The name of the payload file of a delivery's turn. */
export const PAYLOAD_FILE = 'payload.json';

export interface DeliveryRouteOptions {
  client: DreactClient;
  pool: Pool;
  modelPolicy: ModelPolicy;
  limits: AttachmentLimits;
  maxBodyBytes: number;
  ratePerMinute: number;
  now?: () => number;
}

/** The hook's owner, as whom its turns run (a key-less principal: it can start turns and nothing else). */
const hookPrincipal = (hook: HookRow): Principal => ({
  tenantId: hook.tenantId,
  projectId: hook.projectId,
  userId: hook.userId,
  keyId: `hook:${hook.id}`,
  scopes: ['write'],
});

function answer(c: Context, principal: Principal, hook: HookRow, d: DeliveryRow, extra: Record<string, unknown>) {
  return {
    hookId: hook.id,
    deliveryId: d.deliveryId,
    conversationId: clientConversationId(principal, d.conversationId),
    messageId: d.messageId,
    ...(d.turnIndex !== null ? { turnIndex: d.turnIndex, turnId: `turn_${d.turnIndex}` } : {}),
    ...extra,
  };
}

export function registerHookDeliveryRoute(app: Hono<GatewayEnv>, o: DeliveryRouteOptions): void {
  const limit = bucketLimit({ points: o.ratePerMinute, windowSeconds: 60, what: 'per minute for this hook' });
  const now = o.now ?? Date.now;
  const maxSize = o.maxBodyBytes;
  app.post(
    '/v1/hooks/:id',
    bodyLimit({ maxSize, onError: (c) => fail(c, 'too_large', `webhook payload over ${maxSize} bytes`) }),
    async (c) => {
      const id = c.req.param('id');
      if (!HookIdSchema.safeParse(id).success) return fail(c, 'not_found', `no hook "${id}"`);
      let found: Awaited<ReturnType<typeof hookForDelivery>>;
      try {
        found = await hookForDelivery(o.pool, hookSealKey, id);
      } catch (err) {
        if (/DREACT_MCP_TOKEN_KEY/.test((err as Error).message)) return fail(c, 'unavailable', (err as Error).message);
        throw err;
      }
      if (!found) return fail(c, 'not_found', `no hook "${id}"`);
      const { hook, secret } = found;
      const preset = HOOK_PRESETS[hook.preset];
      const body = Buffer.from(await c.req.arrayBuffer()).toString('utf8');
      const headers = (name: string) => c.req.header(name);
      const verdict = verifySignature(preset, secret, { headers, body }, now(), hmacSha256Hex);
      if (!verdict.ok) return fail(c, 'unauthorized', verdict.reason);

      let payload: unknown;
      try {
        payload = JSON.parse(body);
      } catch {
        return fail(c, 'bad_input', 'the payload must be JSON (GitHub: set the content type to application/json)');
      }
      const delivery = deliveryIdOf(preset, headers, payload);
      if ('error' in delivery) return fail(c, 'bad_input', delivery.error);
      const principal = hookPrincipal(hook);
      const signatureSha256 = sha256Hex(verdict.signature);

      let earlier = await earlierDelivery(o.pool, hook.id, delivery.id, signatureSha256);
      if (earlier && earlier.turnIndex !== null)
        return c.json(answer(c, principal, hook, earlier, { duplicate: true }), 200);
      if (!earlier) {
        const refused = await limit(c, hook.id);
        if (refused) return refused;
      }
      const digest = sha256Hex(`${hook.id}\u0000${delivery.id}`);
      const fresh: DeliveryRow = {
        deliveryId: delivery.id,
        conversationId:
          hook.conversationId ?? scopeConversationId(principal, deliveryConversationId(hook.id, digest)).id,
        messageId: `msg_hook_${digest.slice(0, 32)}`,
        turnIndex: null,
      };
      const claimed = !earlier && (await claimDelivery(o.pool, hook.id, { ...fresh, signatureSha256 }));
      if (!claimed) earlier ??= await earlierDelivery(o.pool, hook.id, delivery.id, signatureSha256);
      // Claimed here, or recorded by a request still under way (or one that stopped before its turn
      // started): either way the same message id and conversation, so the start below is the same turn.
      const d = claimed ? fresh : (earlier ?? fresh);

      const rendered = renderTemplate(hook.promptTemplate ?? preset.defaultTemplate, {
        payload,
        delivery: delivery.id,
        event: eventOf(preset, headers, payload),
      });
      let turnIndex: number;
      try {
        const { started } = await startGatewayTurn(
          o.client,
          o.pool,
          principal,
          {
            id: d.conversationId,
            mayCreate: true,
            clientId: clientConversationId(principal, d.conversationId),
          },
          { prompt: deliveryPrompt(rendered), messageId: d.messageId, agent: hook.agent },
          [{ name: PAYLOAD_FILE, bytes: Buffer.from(body, 'utf8') }],
          { modelPolicy: o.modelPolicy, limits: o.limits },
        );
        turnIndex = started.turnIndex;
      } catch (err) {
        if (claimed) await forgetDelivery(o.pool, hook.id, d.deliveryId);
        throw err;
      }
      await recordDeliveryTurn(o.pool, hook.id, d.deliveryId, turnIndex);
      const extra = { missing: rendered.missing, ...(claimed ? {} : { duplicate: true }) };
      return c.json(answer(c, principal, hook, { ...d, turnIndex }, extra), claimed ? 202 : 200);
    },
  );
}
