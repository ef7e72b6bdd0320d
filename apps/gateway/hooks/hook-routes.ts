/**
 * Webhooks of the caller (`write` scope, its own tenant and project — and its user, for a
 * user-bound key; another's hook is a 404): `GET /v1/hooks` lists them (never a secret),
 * `POST /v1/hooks` creates one (hook-admin.ts) and answers 201 with its URL and secret — the only
 * time the secret is shown — `DELETE /v1/hooks/:id` removes it (its URL answers 404 from then on),
 * `POST /v1/hooks/:id/rotate` gives it a new secret (`{ "secret": … }` to set one, e.g. Stripe's
 * endpoint secret; the old one stops at once). The URLs use DREACT_GATEWAY_PUBLIC_URL when set,
 * else the address the request came to. Secrets are sealed under DREACT_MCP_TOKEN_KEY: without it
 * creating and rotating answer 503 naming it, and nothing is written.
 */
import type { Context, Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { HookIdSchema, RotateHookSchema } from '../../../core/hooks/hook';
import { DreactError } from '../../../client/errors';
import { deleteHook, hookSealKey, listHooks, ownedHook, rotateHookSecret } from '../../../store/hooks/hook-store';
import { fail, jsonBody, need, ownerOf, type GatewayEnv } from '../http';
import { createHookFor, hookUrl, hookView } from './hook-admin';

export interface HookRouteOptions {
  /** The gateway's address as senders reach it (DREACT_GATEWAY_PUBLIC_URL); else the request's origin. */
  publicUrl?: string | undefined;
}

function hookIdParam(c: Context): string {
  const id = c.req.param('id') ?? '';
  if (!HookIdSchema.safeParse(id).success) throw new DreactError(`no hook "${id}"`, 'not_found');
  return id;
}

/** The sealing key, or a 503 naming DREACT_MCP_TOKEN_KEY. */
function sealKey(c: Context): Buffer | Response {
  try {
    return hookSealKey();
  } catch (err) {
    return fail(c, 'unavailable', (err as Error).message);
  }
}

export function registerHookRoutes(app: Hono<GatewayEnv>, pool: Pool, opts: HookRouteOptions = {}): void {
  const base = (c: Context) => opts.publicUrl ?? new URL(c.req.url).origin;

  app.get('/v1/hooks', async (c) => {
    const principal = need(c, 'write');
    const hooks = await listHooks(pool, ownerOf(principal));
    return c.json({ hooks: hooks.map((h) => ({ ...hookView(principal, h), url: hookUrl(base(c), h.id) })) });
  });

  app.post('/v1/hooks', async (c) => {
    const principal = need(c, 'write');
    const body = await jsonBody(c, z.unknown());
    const key = sealKey(c);
    if (key instanceof Response) return key;
    const { hook, secret } = await createHookFor(pool, principal, body, key);
    return c.json({ id: hook.id, url: hookUrl(base(c), hook.id), secret, hook }, 201);
  });

  app.delete('/v1/hooks/:id', async (c) => {
    const principal = need(c, 'write');
    const id = hookIdParam(c);
    if (!(await deleteHook(pool, ownerOf(principal), id))) throw new DreactError(`no hook "${id}"`, 'not_found');
    return c.json({ id, deleted: true });
  });

  app.post('/v1/hooks/:id/rotate', async (c) => {
    const principal = need(c, 'write');
    const id = hookIdParam(c);
    const raw = (await c.req.raw.clone().text()).trim();
    const body = raw === '' ? {} : await jsonBody(c, RotateHookSchema);
    const key = sealKey(c);
    if (key instanceof Response) return key;
    if (!(await ownedHook(pool, ownerOf(principal), id))) throw new DreactError(`no hook "${id}"`, 'not_found');
    const secret = await rotateHookSecret(pool, key, ownerOf(principal), id, body.secret);
    if (secret === undefined) throw new DreactError(`no hook "${id}"`, 'not_found');
    return c.json({ id, url: hookUrl(base(c), id), secret });
  });
}
