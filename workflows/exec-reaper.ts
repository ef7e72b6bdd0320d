/** The exec reaper, run by a Temporal Schedule: one activity that stops sandboxes whose turn has ended. */
import { proxyActivities } from '@temporalio/workflow';
import type { ReaperActivities, ReapReport } from '../activities/exec/fargate/reaper';

const { reapExecTasks } = proxyActivities<ReaperActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

export async function ExecReaperWorkflow(): Promise<ReapReport> {
  return reapExecTasks.executeWithOptions({ summary: 'reap exec tasks whose turn ended' }, []);
}
