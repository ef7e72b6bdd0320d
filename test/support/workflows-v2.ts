/**
 * A second build of the workflow code for the Worker Versioning test: the same workflows, except
 * that TurnWorkflow marks its answer — so a test can tell which build ran a turn to completion.
 */
import { setWorkflowOptions } from '@temporalio/workflow';
import { TurnWorkflow as TurnWorkflowV1 } from '../../workflows/turn';
import type { TurnInput, TurnResult } from '../../core/turn/contracts';

export * from '../../workflows';

export async function TurnWorkflow(input: TurnInput): Promise<TurnResult> {
  const result = await TurnWorkflowV1(input);
  return { ...result, answer: `${result.answer} [build v2]` };
}
// The v2 worker is versioned: its turns are pinned like v1's.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, TurnWorkflow);
