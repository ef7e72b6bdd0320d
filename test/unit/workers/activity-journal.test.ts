import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import {
  isJournalFile,
  openActivityJournal,
  processStartOf,
  readJournal,
  workerStateDir,
  writerIsAlive,
  type JournalHeader,
} from '../../../workers/activity-journal';

const who = { identity: '1@host', address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'q' };
const dir = () => mkdtempSync(join(tmpdir(), 'journal-test-'));

test('the journal holds the activities started and not ended, with the header naming its writer', () => {
  const journal = openActivityJournal(dir(), who);
  const a = journal.started('dG9rZW4tYQ==', 'decide');
  journal.started('dG9rZW4tYg==', 'runTool', { workflowId: 'conv/a b/turn/1', runId: 'r-1' });
  journal.started('dG9rZW4tYw==', 'gate');
  journal.ended(a);
  journal.ended(a); // twice: the second is nothing
  const { header, open } = readJournal(readFileSync(journal.file, 'utf8'));
  assert.equal(header.pid, process.pid);
  assert.equal(header.taskQueue, 'q');
  assert.equal(header.processStart, processStartOf(process.pid));
  assert.deepEqual(open, [
    { taskToken: 'dG9rZW4tYg==', activityType: 'runTool', workflow: { workflowId: 'conv/a b/turn/1', runId: 'r-1' } },
    { taskToken: 'dG9rZW4tYw==', activityType: 'gate' },
  ]);
  assert.ok(isJournalFile(journal.file.split('/').pop()!));
});

test('a torn last line (the writer was killed mid-write) is ignored; a bad line is an error naming it', () => {
  const journal = openActivityJournal(dir(), who);
  journal.started('dG9rZW4tYQ==', 'decide');
  appendFileSync(journal.file, '+2 dG9r');
  assert.equal(readJournal(readFileSync(journal.file, 'utf8')).open.length, 1);
  const other = openActivityJournal(dir(), who);
  appendFileSync(other.file, 'garbage\n');
  assert.throws(() => readJournal(readFileSync(other.file, 'utf8')), /bad journal line: "garbage"/);
  assert.throws(() => readJournal(''), /no header line/);
});

test('the journal is rewritten with only its open entries, so it stays small over a long life', () => {
  const journal = openActivityJournal(dir(), who);
  const keep = journal.started('a2VlcA==', 'decide');
  for (let i = 0; i < 20_000; i++) journal.ended(journal.started(`dG9rZW4t${i}`, 'runTool'));
  const last = journal.started('bGFzdA==', 'gate');
  assert.ok(statSync(journal.file).size < 4096 * 40, `journal is ${statSync(journal.file).size} bytes`);
  assert.deepEqual(
    readJournal(readFileSync(journal.file, 'utf8')).open.map((o) => o.activityType),
    ['decide', 'gate'],
  );
  journal.ended(keep);
  journal.ended(last);
  assert.deepEqual(readJournal(readFileSync(journal.file, 'utf8')).open, []);
  journal.remove();
  assert.throws(() => statSync(journal.file), /ENOENT/);
});

test('liveness: this process is alive; an exited or killed process, or its pid run by another process, is not', async () => {
  const header = (pid: number, processStart: string | null): JournalHeader => ({
    v: 1,
    pid,
    processStart,
    ...who,
    startedAt: new Date().toISOString(),
  });
  const self = processStartOf(process.pid);
  assert.notEqual(self, 'gone');
  assert.equal(writerIsAlive(header(process.pid, self as string | null)), true);
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  const exitedPid = Number(child.stdout.trim());
  assert.equal(writerIsAlive(header(exitedPid, self as string | null)), false);
  // Exited and not reaped yet (a zombie: its parent never waits for it): it runs nothing any more.
  if (self !== null) {
    // The shell starts a child that exits shortly, then becomes `sleep`, which never reaps it.
    const parent = spawn('/bin/sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const zombie = Number(await new Promise<string>((r) => parent.stdout!.once('data', (d) => r(String(d)))));
      await waitForState(zombie, 'Z');
      const stat = readFileSync(`/proc/${zombie}/stat`, 'utf8');
      const start = `${(self as string).split(':')[0]}:${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}`;
      assert.equal(writerIsAlive(header(zombie, start)), false);
    } finally {
      parent.kill('SIGKILL');
    }
  }
  if (self !== null) {
    // The same pid, another process (a reused pid, or pid 1 of a restarted container).
    assert.equal(writerIsAlive(header(process.pid, `${self}0`)), false);
  }
});

test('DREACT_WORKER_STATE_DIR names the folder; unset, a folder in the temporary directory', () => {
  assert.equal(workerStateDir('/var/lib/dreact'), '/var/lib/dreact');
  assert.equal(workerStateDir(undefined), join(tmpdir(), 'dreact-worker-state'));
  assert.equal(workerStateDir(' '), join(tmpdir(), 'dreact-worker-state'));
});

/** Waits (up to 5 s) until /proc shows the process in `state` (Linux; elsewhere returns at once). */
async function waitForState(pid: number, state: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return;
    }
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith(state)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`process ${pid} never reached state ${state}`);
}
