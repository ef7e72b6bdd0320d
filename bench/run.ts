/**
 * `npm run bench`: runs every benchmark in one process and prints its figures (ratios are
 * measured within the same run). `npm run bench -- render channels` runs a subset;
 * `npm run bench -- load --server production` runs the load bench on the production Temporal
 * server beside the dev server.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';

type Bench = () => Promise<Record<string, number | string>>;

/* Loaded lazily (require) so `npm run bench -- render` does not start a Temporal server. */
const BENCHES: Record<string, () => Bench> = {
  turn: () => (require('./turn-overhead') as typeof import('./turn-overhead')).benchTurnOverhead,
  embedded: () => (require('./embedded-db') as typeof import('./embedded-db')).benchEmbeddedDb,
  render: () => (require('./render') as typeof import('./render')).benchRender,
  channels: () => (require('./channels') as typeof import('./channels')).benchChannels,
  cache: () => (require('./cache') as typeof import('./cache')).benchCache,
  stream: () => (require('./stream') as typeof import('./stream')).benchStream,
  recovery: () => (require('./recovery') as typeof import('./recovery')).benchRecovery,
  rounds: () => (require('./rounds') as typeof import('./rounds')).benchRounds,
  compaction: () => (require('./compaction') as typeof import('./compaction')).benchCompaction,
  exec: () => (require('./exec') as typeof import('./exec')).benchExec,
  load: () => (require('./load') as typeof import('./load')).benchLoad,
  peers: () => (require('./peers') as typeof import('./peers')).benchPeers,
  storage: () => (require('./storage') as typeof import('./storage')).benchStorage,
  'exec-fargate': () => (require('./exec-fargate') as typeof import('./exec-fargate')).benchExecFargate,
  memsearch: () => (require('./memsearch') as typeof import('./memsearch')).benchMemsearch,
  gateway: () => (require('./gateway') as typeof import('./gateway')).benchGateway,
  'fetch-guard': () => (require('./fetch-guard') as typeof import('./fetch-guard')).benchFetchGuard,
  'provider-ttft': () => (require('./provider-ttft') as typeof import('./provider-ttft')).benchProviderTtft,
  files: () => (require('./files') as typeof import('./files')).benchFiles,
  agents: () => (require('./agents') as typeof import('./agents')).benchAgents,
  mcp: () => (require('./mcp') as typeof import('./mcp')).benchMcp,
  evals: () => (require('./evals') as typeof import('./evals')).benchEvals,
  'web-render': () => (require('./web-render') as typeof import('./web-render')).benchWebRender,
  governance: () => (require('./governance') as typeof import('./governance')).benchGovernance,
};

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const args = process.argv.slice(2);
  // `--server dev|production`: the Temporal server of the benches that take one (load: bench/load-server.ts).
  const at = args.indexOf('--server');
  if (at !== -1) {
    process.env.DREACT_BENCH_SERVER = args[at + 1] ?? '';
    args.splice(at, 2);
  }
  const wanted = args;
  const unknown = wanted.filter((w) => !(w in BENCHES));
  if (unknown.length)
    throw new Error(`unknown bench ${unknown.join(', ')} (known: ${Object.keys(BENCHES).join(', ')})`);
  for (const name of wanted.length ? wanted : Object.keys(BENCHES)) {
    const t0 = Date.now();
    const figures = await BENCHES[name]!()();
    console.log(`\n## ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(48)} ${v}`);
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
