/**
 * The turn's activities, bound to the worker's dependencies. Workflows import only the type.
 */
import type { ActivityDeps } from './deps';
import { makeDecide } from './turn/decide';
import { makeRunTool } from './turn/run-tool';
import { makeContextActivities } from './turn/context';

export function createTurnActivities(deps: ActivityDeps) {
  return {
    ...makeContextActivities(deps),
    decide: makeDecide(deps),
    runTool: makeRunTool(deps),
  };
}

export type TurnActivities = ReturnType<typeof createTurnActivities>;
