/**
 * Worker Versioning behaviour of each workflow type (used when workers run with a deployment
 * version: DREACT_DEPLOYMENT_NAME + DREACT_BUILD_ID, workers/deployment.ts).
 *
 * - A turn, and the compaction and persistence it starts, is PINNED: it finishes on the build that
 *   started it, so a deploy never replays a running turn on changed code. Their code carries no
 *   `patched()` (each patch marker costs a marker and a TemporalChangeVersion upsert, a visibility
 *   update, per turn): a change to it re-records the replay fixtures of its shapes
 *   (`DREACT_RECORD_FIXTURES=1`) and drops those of the shapes it replaced. Turns are short-lived,
 *   but a turn in flight when unversioned workers are replaced by changed turn code meets a
 *   nondeterminism error (its workflow task is retried until a worker with its code returns):
 *   deploy workflow changes with Worker Versioning, or drain turns first. One patch it does carry:
 *   `turn-cancel` in the cancel signal's handler (workflows/turn/run.ts), recorded only by a turn
 *   that is cancelled — a turn of older code that got a `cancel` signal (dropped then) replays.
 * - A background subagent's task (workflows/background-task.ts) lives as long as its subagent's turn:
 *   PINNED like the turn. The turn code that starts one carries `background-subagents`, recorded only
 *   by a turn that ran a background delegate call.
 *   A waited delegate call's child start carries `delegate-detach` (ABANDON, so a steer with `detach`
 *   can hand it to an adopting task), recorded only by a turn that ran a waited delegate call.
 * - The conversation workflow lives across many turns, hence across builds: AUTO_UPGRADE, so it
 *   moves to the current build at its next task; changes to its code go through `patched()`. A
 *   patch is retired in two steps: `deprecatePatch()` once no run without its marker can still be
 *   running (the fixtures of those runs are dropped), then the call removed once no run with its
 *   non-deprecated marker can (a deprecated marker replays without the call; each marker a run
 *   records costs an event and a TemporalChangeVersion upsert). `agent-binding` and
 *   `tenant-search-attributes` are at step one: every release records them.
 *   `schedule-turn-attribute` (a schedule run's turn gets `ScheduleId`) is called for such a
 *   turn only, so other turns record no marker.
 * - The exec reaper is a short scheduled sweep: AUTO_UPGRADE.
 * - A schedule run (ScheduledTurnWorkflow) lives as long as its turn: PINNED, like the turn.
 *
 * An unversioned worker must not send a behaviour (the server refuses the task), so each annotation
 * applies only when the worker running the workflow has a deployment version.
 */
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import type { VersioningBehavior } from '@temporalio/common';
import { ConversationWorkflow } from './conversation';
import { TurnWorkflow } from './turn';
import { PersistTurnWorkflow } from './persist';
import { CompactionWorkflow } from './compaction';
import { ExecReaperWorkflow } from './exec-reaper';
import { BackgroundTaskWorkflow } from './background-task';
import { ScheduledTurnWorkflow } from './scheduled-turn';

function behaviour(versioningBehavior: VersioningBehavior) {
  return () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior } : {});
}

setWorkflowOptions(behaviour('PINNED'), TurnWorkflow);
setWorkflowOptions(behaviour('PINNED'), PersistTurnWorkflow);
setWorkflowOptions(behaviour('PINNED'), CompactionWorkflow);
setWorkflowOptions(behaviour('PINNED'), BackgroundTaskWorkflow);
setWorkflowOptions(behaviour('AUTO_UPGRADE'), ConversationWorkflow);
setWorkflowOptions(behaviour('AUTO_UPGRADE'), ExecReaperWorkflow);
setWorkflowOptions(behaviour('PINNED'), ScheduledTurnWorkflow);
