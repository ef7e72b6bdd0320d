/** The compaction child workflow's activities, bound to the worker's dependencies. */
import type { ActivityDeps } from '../deps';
import { makePlanCompaction } from './plan';
import { makeSummarizeRange } from './summarize';
import { makeCommitCompaction, makeRecordCompactionFailure } from './commit';

export function createCompactionActivities(deps: ActivityDeps) {
  return {
    planCompaction: makePlanCompaction(deps),
    summarizeRange: makeSummarizeRange(deps),
    commitCompaction: makeCommitCompaction(deps),
    recordCompactionFailure: makeRecordCompactionFailure(deps),
  };
}

export type CompactionActivities = ReturnType<typeof createCompactionActivities>;
