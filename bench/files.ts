/**
 * Hosted file downloads through the gateway (`npm run bench -- files`): a 50 MB artifact (random
 * bytes: incompressible, as a chart or an archive is) stored like an exec output, served by the
 * gateway on loopback with an API key. Figures: time to first byte and throughput of whole
 * downloads (each checked by SHA-256), latency of a 1 MiB range from the middle, and how much the
 * gateway process's resident memory grew while serving (the bytes stream from Postgres in 1 MiB
 * `substring` reads; nothing holds the whole file). Bounded: 3 downloads, 10 ranges, 60 s cap each.
 * No Temporal server: the file routes need only Postgres.
 */
import { createHash, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from '@temporalio/client';
import { percentile } from './stats';
import { openDb, migrate, dropSchema } from '../store/db';
import { createApiKey, claimConversation } from '../store/tenancy-store';
import { openTurn } from '../store/turn-store';
import { putArtifact, FILE_ARTIFACT_KIND } from '../store/artifact-store';
import { startGateway } from '../apps/gateway/server';
import { DreactClient } from '../client/api';

const SIZE = 50 * 1024 * 1024;
const DOWNLOADS = 3;
const RANGES = 10;
const CAP_MS = 60_000;

export async function benchFiles(): Promise<Record<string, number | string>> {
  const db = openDb({ schema: `bench_files_${process.pid}`, max: 8 });
  await migrate(db);
  const gwPromise = (async () => {
    const owner = { tenantId: 'local', projectId: 'default', userId: null };
    const conversationId = `bench_files_${process.pid}`;
    await claimConversation(db.pool, conversationId, owner);
    await openTurn(db.pool, {
      conversationId,
      turnIndex: 1,
      turnId: 'turn_1',
      workflowId: `conv/${conversationId}/turn/1`,
    });
    const bytes = randomBytes(SIZE);
    const sha = createHash('sha256').update(bytes).digest('hex');
    const key = 'turn_1/outputs/big.bin';
    const t0 = performance.now();
    await putArtifact(db.pool, conversationId, {
      kind: FILE_ARTIFACT_KIND,
      key,
      turnId: 'turn_1',
      mime: 'application/octet-stream',
      bytes,
      payload: { kind: 'file' },
    });
    const storeMs = performance.now() - t0;
    const { key: apiKey } = await createApiKey(db.pool, { ...owner, scopes: ['read'] });
    const gw = await startGateway({
      client: new DreactClient(new Client()), // lazy connection: never used by the file routes
      pool: db.pool,
      apiKeys: [],
      listen: false,
      web: false,
      port: 0,
      log: () => {},
    });
    return { gw, conversationId, key, sha, apiKey, storeMs };
  })();
  const { gw, conversationId, key, sha, apiKey, storeMs } = await gwPromise;
  const url = `${gw.url}/v1/conversations/${conversationId}/files/${key}`;
  const headers = { 'x-api-key': apiKey };
  try {
    const rss0 = process.memoryUsage().rss;
    let rssPeak = rss0;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
    const ttfb: number[] = [];
    const mbps: number[] = [];
    for (let i = 0; i < DOWNLOADS; i++) {
      const t0 = performance.now();
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(CAP_MS) });
      if (res.status !== 200 || !res.body) throw new Error(`download: ${res.status}`);
      const reader = res.body.getReader();
      const hash = createHash('sha256');
      let first: number | undefined;
      let got = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        first ??= performance.now() - t0;
        hash.update(value);
        got += value.length;
      }
      const ms = performance.now() - t0;
      if (got !== SIZE || hash.digest('hex') !== sha) throw new Error(`download ${i}: ${got} bytes, wrong sha256`);
      ttfb.push(first ?? ms);
      mbps.push(SIZE / 1024 / 1024 / (ms / 1000));
    }
    const rangeMs: number[] = [];
    for (let i = 0; i < RANGES; i++) {
      const start = Math.floor(SIZE / 2) + i * 4096;
      const t0 = performance.now();
      const res = await fetch(url, { headers: { ...headers, range: `bytes=${start}-${start + 1024 * 1024 - 1}` } });
      const body = await res.arrayBuffer();
      if (res.status !== 206 || body.byteLength !== 1024 * 1024) throw new Error(`range: ${res.status}`);
      rangeMs.push(performance.now() - t0);
    }
    clearInterval(sampler);
    return {
      'file size (MB)': SIZE / 1024 / 1024,
      'store the artifact (ms)': Math.round(storeMs),
      'time to first byte p50 (ms)': percentile(ttfb, 50),
      'time to first byte max (ms)': percentile(ttfb, 100),
      'throughput p50 (MB/s)': Math.round(percentile(mbps, 50) * 10) / 10,
      'throughput min (MB/s)': Math.round(Math.min(...mbps) * 10) / 10,
      '1 MiB range from the middle p50 (ms)': percentile(rangeMs, 50),
      '1 MiB range from the middle p95 (ms)': percentile(rangeMs, 95),
      'resident memory growth, gateway and client in this process (MB)': Math.round((rssPeak - rss0) / 1024 / 1024),
    };
  } finally {
    await gw.close();
    await dropSchema(db);
    await db.close();
  }
}

if (require.main === module) {
  benchFiles().then(
    (f) => {
      for (const [k, v] of Object.entries(f)) console.log(`  ${k.padEnd(48)} ${v}`);
      process.exit(0);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
