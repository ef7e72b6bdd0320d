/**
 * Render benchmark: renderTimeline over 1 000 / 5 000 / 10 000 blocks (median of several runs).
 * Goal: ≤ 30 ms at 10 000 blocks, growing linearly.
 */
import { performance } from 'node:perf_hooks';
import { makeBlock, type Block } from '../core/timeline/block';
import { paths } from '../core/timeline/paths';
import { renderTimeline, type RenderConfig } from '../core/timeline/render';

const T0 = Date.parse('2026-11-21T10:00:00Z');
const ROUNDS_PER_TURN = 8; // header + prompt + 8 × (call, result) + completion = 19 blocks

function hex12(n: number): string {
  return n.toString(16).padStart(12, '0');
}

/** A conversation of ~`n` blocks; the last turn is current. Results alternate short / long (truncated). */
export function benchBlocks(n: number): Block[] {
  const blocks: Block[] = [];
  let call = 0;
  for (let t = 0; blocks.length < n; t++) {
    const turnId = `turn_${t}`;
    const ts = new Date(T0 + t * 60_000).toISOString();
    blocks.push(makeBlock({ type: 'turn.header', author: 'system', turn_id: turnId, ts }));
    blocks.push(
      makeBlock({
        type: 'user.prompt',
        author: 'user',
        turn_id: turnId,
        ts,
        path: paths.userPrompt(turnId),
        text: `Question ${t}: ${'please look into this. '.repeat(10)}`,
      }),
    );
    for (let r = 0; r < ROUNDS_PER_TURN && blocks.length < n; r++) {
      const id = `tc_${hex12(call++)}`;
      blocks.push(
        makeBlock({
          type: 'react.tool.call',
          author: 'react',
          turn_id: turnId,
          ts,
          call_id: id,
          path: paths.toolCall(turnId, id),
          mime: 'application/json',
          meta: { tool_id: 'web_search' },
          text: JSON.stringify({ tool_id: 'web_search', tool_call_id: id, params: { q: `query ${r}` } }),
        }),
      );
      const body =
        r % 2
          ? 'short result'
          : JSON.stringify({
              hits: Array.from({ length: 12 }, (_, i) => ({
                i,
                title: `hit ${i}`,
                url: `https://example.com/${t}/${i}`,
              })),
            });
      blocks.push(
        makeBlock({
          type: 'react.tool.result',
          author: 'tool',
          turn_id: turnId,
          ts,
          call_id: id,
          path: paths.toolResult(turnId, id),
          mime: 'application/json',
          text: body,
        }),
      );
    }
    if (blocks.length < n)
      blocks.push(
        makeBlock({
          type: 'assistant.completion',
          author: 'assistant',
          turn_id: turnId,
          ts,
          path: paths.completion(turnId),
          text: `Answer ${t}. ${'Some findings. '.repeat(30)}`,
        }),
      );
  }
  return blocks.slice(0, n);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median wall-clock ms and median process CPU ms (CPU time is steadier on a loaded machine). */
function time(blocks: Block[], config: RenderConfig, runs: number): { wall: number; cpu: number; cpuMin: number } {
  const currentTurnId = blocks[blocks.length - 1]!.turn_id;
  const input = {
    blocks,
    currentTurnId,
    systemPrompt: 'You are the agent.',
    sources: [{ sid: 1, title: 'A', url: 'https://a.example/' }],
    announce: { iteration: 3, maxIterations: 15 },
    cacheState: { lastTouchAt: T0 },
  };
  for (let i = 0; i < 3; i++) renderTimeline(input, config); // warm-up
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    renderTimeline(input, config);
    wall.push(performance.now() - t);
    const d = process.cpuUsage(c);
    cpu.push((d.user + d.system) / 1000);
  }
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return { wall: r2(median(wall)), cpu: r2(median(cpu)), cpuMin: r2(Math.min(...cpu)) };
}

export async function benchRender(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const sizes = [1_000, 5_000, 10_000];
  // JIT warm-up on the largest input first, so the small sizes are not measured cold
  const warm = benchBlocks(10_000);
  time(warm, { now: T0 }, 10);
  time(warm, { now: T0 + 3_600_000, ttl: { cacheTtlSeconds: 300 } }, 3);
  for (const n of sizes) {
    const blocks = benchBlocks(n);
    const plain = time(blocks, { now: T0 }, 21);
    const ttl = time(blocks, { now: T0 + 3_600_000, ttl: { cacheTtlSeconds: 300 } }, 11);
    out[`render_${n}_blocks_median_ms`] = plain.wall;
    out[`render_${n}_blocks_median_cpu_ms`] = plain.cpu;
    out[`render_${n}_blocks_min_cpu_ms`] = plain.cpuMin;
    out[`render_${n}_blocks_ttl_expired_median_ms`] = ttl.wall;
    out[`render_${n}_blocks_ttl_expired_median_cpu_ms`] = ttl.cpu;
  }
  // min CPU time per 1k blocks: the GC-free cost, which shows the linear growth
  const per1k = sizes.map((n) => (out[`render_${n}_blocks_min_cpu_ms`] as number) / (n / 1000));
  out['min_cpu_ms_per_1k_blocks_at_1k_5k_10k'] = per1k.map((x) => x.toFixed(2)).join(' / ');
  // judged on CPU time: wall time also counts waiting for a core on a shared machine
  out['goal_10k_cpu_median_le_30ms'] = (out['render_10000_blocks_median_cpu_ms'] as number) <= 30 ? 'met' : 'missed';
  return out;
}

if (require.main === module) {
  void benchRender().then((r) => console.log(r));
}
