/**
 * The turn's activities, bound to the worker's dependencies. Workflows import only the type.
 */
import type { ActivityDeps } from './deps';
import { makeDecide } from './turn/decide';
import { makeRunTool } from './turn/run-tool';
import { makeContextActivities } from './turn/context';
import { makeGate } from './turn/gate';
import { makeSelectTools } from './turn/tool-selection';
import { makeDecideNative } from './turn/decide-native';
import { makeSynthesizeAnswer } from './turn/synthesize';

export function createTurnActivities(deps: ActivityDeps) {
  return {
    ...makeContextActivities(deps),
    decide: makeDecide(deps),
    decideNative: makeDecideNative(deps),
    synthesizeAnswer: makeSynthesizeAnswer(deps),
    runTool: makeRunTool(deps),
    gate: makeGate(deps),
    selectTools: makeSelectTools(deps),
  };
}

export type TurnActivities = ReturnType<typeof createTurnActivities>;
