/** Channel parser throughput (MB/s of UTF-16 input, 1 MB = 2^20 chars). Prints nothing. */
import { performance } from 'node:perf_hooks';
import { ChannelStreamParser, CitationStream, type ChannelSpec, type SourceRef } from '../core/channels';

const SPECS: ChannelSpec[] = [
  { name: 'thinking', format: 'markdown', marker: 'thinking' },
  { name: 'ReactDecisionOutV2', format: 'json', composite: true },
  { name: 'code', format: 'code', marker: 'subsystem' },
  { name: 'answer', format: 'markdown', citations: true },
  { name: 'followup', format: 'json' },
];

const SOURCES: SourceRef[] = Array.from({ length: 20 }, (_, i) => ({
  sid: i + 1,
  title: `Source ${i + 1} | t`,
  url: `https://s${i + 1}.example/p`,
}));

function protocolRound(i: number): string {
  const answer = `Paragraph ${i} with a citation [[S:${(i % 20) + 1}]] and \`inline <code>\` and more prose. `.repeat(
    8,
  );
  const decision = JSON.stringify({
    action: 'complete',
    notes: '',
    final_answer: `Answer ${i} <channel:answer> [[S:1,2]] `.repeat(6),
  });
  return (
    `<channel:thinking>Let me think about step ${i}... ${'reasoning '.repeat(30)}</channel:thinking>` +
    `<channel:ReactDecisionOutV2>\`\`\`json\n${decision}\n\`\`\`</channel:ReactDecisionOutV2>` +
    `<channel:code>for x in range(${i}):\n    print(f"{x}")  # \`\`\`\n</channel:code>` +
    `<channel:answer>${answer}\n\`\`\`\nfenced <channel:x>\n\`\`\`\n</channel:answer>` +
    `<channel:followup>{"followups":["a ${i}","b"]}</channel:followup>`
  );
}

function corpus(chars: number): string {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < chars; i++) {
    const r = protocolRound(i);
    parts.push(r);
    n += r.length;
  }
  return parts.join('');
}

function feed(text: string, size: number): void {
  const p = new ChannelStreamParser(SPECS, { sources: SOURCES, stripUsage: true });
  for (let i = 0; i < text.length; i += size) p.push(text.slice(i, i + size));
  p.end();
  p.results();
}

/** Median throughput over `runs` timed runs (after one warm-up), robust to a noisy machine. */
function mbps(chars: number, fn: () => void, runs = 7): number {
  fn();
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  times.sort((x, y) => x - y);
  const median = times[Math.floor(runs / 2)]!;
  return Math.round((chars / (1 << 20) / (median / 1000)) * 10) / 10;
}

export async function benchChannels(): Promise<Record<string, number | string>> {
  const big = corpus(2 << 20);
  const small = corpus(128 << 10);
  const prose = `text [[S:3]] more text [[S:1-4]] and [ brackets ] ${'lorem ipsum '.repeat(10)}`.repeat(2000);
  return {
    corpus_chars: big.length,
    parse_whole_mb_s: mbps(big.length, () => feed(big, big.length)),
    parse_chunk4096_mb_s: mbps(big.length, () => feed(big, 4096)),
    parse_chunk50_mb_s: mbps(big.length, () => feed(big, 50)),
    parse_chunk7_mb_s: mbps(small.length, () => feed(small, 7)),
    parse_chunk1_mb_s: mbps(small.length, () => feed(small, 1)),
    citation_stream_chunk50_mb_s: mbps(prose.length, () => {
      const s = new CitationStream(SOURCES, 'markdown');
      for (let i = 0; i < prose.length; i += 50) s.push(prose.slice(i, i + 50));
      s.flush();
    }),
    unit: 'MB/s of UTF-16 input (1 MB = 2^20 chars), median of 7 runs after a warm-up',
  };
}

if (require.main === module) {
  benchChannels().then(
    (f) => console.log(JSON.stringify(f, null, 2)),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
