/**
 * Replay fixtures: with DREACT_RECORD_FIXTURES=1, integration tests export the histories of the
 * workflows they ran to test/fixtures/histories/<name>.json through the Temporal CLI
 * (`temporal workflow show --output json`; hand-encoding a fetched history breaks timestamps).
 * test/replay replays every fixture against the current workflow code.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findTemporalCli } from '../../apps/stack/temporal-cli';

export const FIXTURE_DIR = join(__dirname, '..', 'fixtures', 'histories');

export async function recordHistory(address: string, workflowId: string, name: string): Promise<void> {
  if (process.env.DREACT_RECORD_FIXTURES !== '1') return;
  const cli = findTemporalCli();
  if (!cli) throw new Error('recording fixtures needs the Temporal CLI (npm run temporal:install)');
  const json = execFileSync(
    cli,
    ['workflow', 'show', '--address', address, '--workflow-id', workflowId, '--output', 'json'],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  writeFileSync(join(FIXTURE_DIR, `${name}.json`), json);
  const index = readFixtureIndex();
  index[name] = workflowId;
  writeFileSync(INDEX_FILE, `${JSON.stringify(index, Object.keys(index).sort(), 2)}\n`);
}

/** name → workflow id of each fixture (replay needs the original workflow id). */
export const INDEX_FILE = join(FIXTURE_DIR, 'index.json');
export function readFixtureIndex(): Record<string, string> {
  return existsSync(INDEX_FILE) ? (JSON.parse(readFileSync(INDEX_FILE, 'utf8')) as Record<string, string>) : {};
}
