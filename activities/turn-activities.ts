/**
 * The turn's activities, bound to the worker's dependencies. Workflows import only the type.
 */
import type { ActivityDeps } from './deps';
import { makeDecide, makeDecideNative } from './turn/decide';
import { makeRunTool } from './turn/run-tool';
import { makeRecordToolFailure, toolActivities } from './turn/tool-activity';
import { createCompactionActivities } from './compaction';
import { makeContextActivities } from './turn/context';
import { makeGate } from './turn/gate';
import { makeSelectTools } from './turn/tool-selection';
import { makeSynthesizeAnswer } from './turn/synthesize';
import { makeAppendToolResults } from './turn/tool-results';
import { createPurgeActivities } from './purge';
import { makeIndexTurnMemory } from './memory/index-turn';
import { makeApprovalActivities } from './approval/approval-activities';
import { makeTurnSlotActivities } from './governance/turn-slots';
import { makeRecordTurnCancellation } from './turn/cancel';

export function createTurnActivities(deps: ActivityDeps) {
  return {
    ...makeContextActivities(deps),
    decide: makeDecide(deps),
    decideNative: makeDecideNative(deps),
    synthesizeAnswer: makeSynthesizeAnswer(deps),
    runTool: makeRunTool(deps),
    recordToolFailure: makeRecordToolFailure(deps),
    appendToolResults: makeAppendToolResults(deps),
    gate: makeGate(deps),
    selectTools: makeSelectTools(deps),
    indexTurnMemory: makeIndexTurnMemory(deps),
    recordTurnCancellation: makeRecordTurnCancellation(deps),
  };
}

export type TurnActivities = ReturnType<typeof createTurnActivities>;

/** The turn activities plus one activity per tool that declares its own (what the worker registers). */
export function createWorkerActivities(deps: ActivityDeps) {
  const own = toolActivities(deps);
  const turn = {
    ...createTurnActivities(deps),
    ...createCompactionActivities(deps),
    ...createPurgeActivities(deps),
    // Human approval of tool calls (workflows/turn/approval-step.ts).
    ...makeApprovalActivities(deps),
    // Per-tenant turn concurrency (activities/governance/turn-slots.ts).
    ...makeTurnSlotActivities(deps),
  };
  for (const name of Object.keys(own)) {
    if (name in turn) throw new Error(`a tool's activity name ${name} collides with a turn activity`);
  }
  return { ...turn, ...own };
}
