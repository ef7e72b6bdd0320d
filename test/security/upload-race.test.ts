/**
 * Security suite, the cross-tenant upload race (issue 26, defect 4). Tenant B starts a multipart
 * turn on a free conversation id; between the gateway's ownership check and the staging of B's
 * files, tenant A claims that id. Before the fix B got a 404 but its file stayed in `artifacts`
 * under A's conversation. The interleaving is driven by a promise, not a sleep: the gateway's pool
 * holds B's ownership lookup until A's claim is committed.
 *
 * Real Postgres (a schema of its own); no Temporal — B's request ends before any workflow call.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pool } from 'pg';
import type { Client } from '@temporalio/client';
import { dropSchema, migrate, openDb, type Db } from '../../store/db';
import { claimConversation, conversationOwner, createApiKey, type ConversationOwner } from '../../store/tenancy-store';
import { stageUploads } from '../../store/upload-store';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { DreactClient } from '../../client/api';
import { uniqueId } from '../support/stack';

const A: ConversationOwner = { tenantId: 'tenant-a', projectId: 'web', userId: null };
const B: ConversationOwner = { tenantId: 'tenant-b', projectId: 'web', userId: null };

let db: Db;
let gw: GatewayApp;
let keyB: string;
/** Runs once, right after the gateway's first owner lookup of `watched` (then the lookup's answer goes back). */
let pause: { watched: string; hook: (lookedUp: string) => Promise<void> } | undefined;

/**
 * The gateway's pool, with one seam: a `SELECT … FROM conversations WHERE id = $1` naming the
 * watched id (the route's ownership check) runs, then waits for the hook before answering.
 */
function seamedPool(pool: Pool): Pool {
  return new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop === 'query')
        return async (...args: unknown[]) => {
          const result = await (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
          const [sql, params] = args as [unknown, unknown[] | undefined];
          const p = pause;
          if (
            p &&
            typeof sql === 'string' &&
            /FROM conversations WHERE id = \$1/.test(sql) &&
            String(params?.[0] ?? '').endsWith(p.watched)
          ) {
            pause = undefined;
            await p.hook(String(params![0]));
          }
          return result;
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

before(async () => {
  db = openDb({ schema: uniqueId('t_uprace').toLowerCase() });
  await migrate(db);
  keyB = (await createApiKey(db.pool, { ...B, scopes: ['read', 'write'] })).key;
  gw = await createGatewayApp({
    // B's request never reaches Temporal (it ends in a 404 before any workflow call).
    client: new DreactClient({} as Client),
    pool: seamedPool(db.pool),
    apiKeys: [],
    listen: false,
    web: false,
  });
});
after(async () => {
  await gw?.close();
  await dropSchema(db);
  await db.close();
});

/** Upload rows stored under a conversation that a tenant other than `tenantId` owns. */
async function uploadsOutside(tenantId: string): Promise<Array<{ conversation_id: string; key: string }>> {
  const res = await db.pool.query(
    `SELECT a.conversation_id, a.key FROM artifacts a JOIN conversations c ON c.id = a.conversation_id
      WHERE a.kind = 'upload' AND c.tenant_id <> $1`,
    [tenantId],
  );
  return res.rows;
}

function multipart(prompt: string, files: Array<[string, string]>): FormData {
  const f = new FormData();
  f.append('prompt', prompt);
  for (const [name, text] of files) f.append('files', new Blob([Buffer.from(text)], { type: 'text/plain' }), name);
  return f;
}

test('attack: B uploads to a free id that A claims mid-request — B gets 404 and nothing of B lands in A’s conversation', async () => {
  const id = uniqueId('race');
  let claimedBy: ConversationOwner | undefined;
  // A's claim lands after the route saw the id free, before B's files are staged.
  pause = {
    watched: id,
    // The id the route looked up: B's own, or a longer name ending in it in a tenant-scoped id space.
    hook: async (lookedUp) => {
      claimedBy = await claimConversation(db.pool, lookedUp, A);
    },
  };
  const res = await gw.fetch(
    new Request(`http://gw/v1/conversations/${id}/turns`, {
      method: 'POST',
      headers: { 'x-api-key': keyB },
      body: multipart('summarise this', [['secret-b.txt', 'tenant B private notes\n']]),
    }),
  );
  assert.equal(pause, undefined, 'the interleaving happened (A claimed between the check and the staging)');
  assert.deepEqual(claimedBy, A);
  if (res.status === 202) {
    // A tenant-scoped id space: B's id was never A's — then B's upload is B's own and that is fine.
    assert.deepEqual(await uploadsOutside(B.tenantId), []);
    return;
  }
  assert.equal(res.status, 404, await res.clone().text());
  assert.deepEqual(await uploadsOutside(B.tenantId), [], "B's file is not stored under A's conversation");
  const blobs = await db.pool.query(`SELECT count(*)::int AS n FROM artifacts WHERE key LIKE '%secret-b.txt'`);
  assert.equal(blobs.rows[0].n, 0, 'no staged row at all');
});

test('attack: staging for an id another tenant already owns writes nothing and says "no conversation"', async () => {
  const id = uniqueId('owned');
  await claimConversation(db.pool, id, A);
  await assert.rejects(
    stageUploads(
      db.pool,
      id,
      'msg_b',
      [{ name: 'x.txt', mime: 'text/plain', bytes: Buffer.from('b'), payload: { kind: 'text', name: 'x.txt' } }],
      B,
    ),
    /no conversation/,
  );
  assert.deepEqual(await uploadsOutside(A.tenantId), []);
  const rows = await db.pool.query(`SELECT count(*)::int AS n FROM artifacts WHERE conversation_id = $1`, [id]);
  assert.equal(rows.rows[0].n, 0);
  assert.deepEqual(await conversationOwner(db.pool, id), A, 'the owner is unchanged');
});

test('control: the owner (and a free id) still stage, and the id becomes the uploader’s in the same transaction', async () => {
  const id = uniqueId('free');
  const keys = await stageUploads(
    db.pool,
    id,
    'msg_b',
    [{ name: 'y.txt', mime: 'text/plain', bytes: Buffer.from('y'), payload: { kind: 'text', name: 'y.txt' } }],
    B,
  );
  assert.deepEqual(keys, ['msg_b/y.txt']);
  assert.deepEqual(await conversationOwner(db.pool, id), B);
  // Same owner again: idempotent.
  assert.deepEqual(
    await stageUploads(
      db.pool,
      id,
      'msg_b',
      [{ name: 'y.txt', mime: 'text/plain', bytes: Buffer.from('y'), payload: { kind: 'text', name: 'y.txt' } }],
      B,
    ),
    ['msg_b/y.txt'],
  );
  // A user-bound key of the same tenant and project may not write to another user's conversation.
  await assert.rejects(
    stageUploads(
      db.pool,
      id,
      'msg_u',
      [{ name: 'z.txt', mime: 'text/plain', bytes: Buffer.from('z'), payload: { kind: 'text', name: 'z.txt' } }],
      { ...B, userId: 'u1' },
    ),
    /no conversation/,
  );
});
