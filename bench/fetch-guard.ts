/**
 * What web_fetch's address guard adds to a fetch (issue 26: ≤ 2 ms p50, resolution excluded).
 * Against a loopback server: one hop through the guard on the allow-list path (URL check, port,
 * allow-list match, classification, pinned connection) vs the same pinned GET with no guard,
 * interleaved so drift hits both alike; plus the check alone, and the old transport (global fetch)
 * for reference. The resolver is a stub answering at once, so resolution is excluded.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { guardUrl, type GuardedTarget, type HostResolver } from '../activities/net/address-guard';
import { pinnedGet } from '../activities/net/pinned-get';
import { parseAllowList } from '../core/net/address-policy';

const ROUNDS = 400;
const WARMUP = 50;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!.toFixed(3));
}

async function drain(res: Response): Promise<void> {
  await res.arrayBuffer();
}

export async function benchFetchGuard(): Promise<Record<string, number | string>> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><title>bench</title><body>ok</body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const resolver: HostResolver = async () => [{ address: '127.0.0.1', family: 4 }];
  const allowList = parseAllowList(`intranet.bench:${port}`);
  const url = new URL(`http://intranet.bench:${port}/page`);
  const unchecked: GuardedTarget = {
    url,
    host: url.hostname,
    port,
    addresses: [{ address: '127.0.0.1', family: 4 }],
    literal: false,
  };
  const headers = { 'user-agent': 'bench', accept: 'text/html' };
  const signal = new AbortController().signal;

  const guarded: number[] = [];
  const bare: number[] = [];
  const globalFetch: number[] = [];
  const checkOnly: number[] = [];
  const checkPublic: number[] = [];
  const publicUrl = new URL('https://93.184.215.14/page');
  try {
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      let t = performance.now();
      const checked = await guardUrl(url, { allowList, resolver });
      if (!checked.ok) throw new Error(`bench: the allow-listed URL was refused: ${checked.reason}`);
      await drain(await pinnedGet(checked.target, { signal, headers }));
      const g = performance.now() - t;

      t = performance.now();
      await drain(await pinnedGet(unchecked, { signal, headers }));
      const b = performance.now() - t;

      t = performance.now();
      await drain(await fetch(`http://127.0.0.1:${port}/page`, { headers }));
      const f = performance.now() - t;

      t = performance.now();
      await guardUrl(url, { allowList, resolver });
      const c = performance.now() - t;

      t = performance.now();
      await guardUrl(publicUrl, {});
      const cp = performance.now() - t;

      if (i < WARMUP) continue;
      guarded.push(g);
      bare.push(b);
      globalFetch.push(f);
      checkOnly.push(c);
      checkPublic.push(cp);
    }
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  const overhead = pct(guarded, 50) - pct(bare, 50);
  return {
    rounds: ROUNDS,
    guarded_hop_p50_ms: pct(guarded, 50),
    guarded_hop_p95_ms: pct(guarded, 95),
    unguarded_hop_p50_ms: pct(bare, 50),
    unguarded_hop_p95_ms: pct(bare, 95),
    guard_overhead_p50_ms: Number(overhead.toFixed(3)),
    guard_check_allow_list_p50_ms: pct(checkOnly, 50),
    guard_check_allow_list_p95_ms: pct(checkOnly, 95),
    guard_check_public_literal_p50_ms: pct(checkPublic, 50),
    guard_check_public_literal_p95_ms: pct(checkPublic, 95),
    old_transport_global_fetch_p50_ms: pct(globalFetch, 50),
    old_transport_global_fetch_p95_ms: pct(globalFetch, 95),
    budget: overhead <= 2 ? 'ok (≤ 2 ms p50)' : `OVER (${overhead.toFixed(3)} ms > 2 ms p50)`,
  };
}
