/** Baseline for `npm run bench`: N sequential round trips of a no-op activity (bench bundle only). */
import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '10 seconds' });

export async function NoopRoundsWorkflow(rounds: number): Promise<number> {
  for (let i = 0; i < rounds; i++) await noop.executeWithOptions({ summary: `noop ${i + 1}` }, []);
  return rounds;
}
