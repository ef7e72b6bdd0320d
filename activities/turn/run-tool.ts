/**
 * runTool activity: the tool activity (activities/turn/tool-activity.ts) for every tool that does
 * not declare an activity of its own. Returns only a bounded preview of the observation.
 */
import type { ActivityDeps } from '../deps';
import { makeToolActivity } from './tool-activity';

export function makeRunTool(deps: ActivityDeps) {
  return makeToolActivity(deps);
}
