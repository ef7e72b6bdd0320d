/** Workflow entry point for the worker bundle. Deterministic code only (see test/unit/determinism). */
export { ConversationWorkflow } from './conversation';
export { TurnWorkflow } from './turn';
export { PersistTurnWorkflow } from './persist';
export { CompactionWorkflow } from './compaction';
export { ExecReaperWorkflow } from './exec-reaper';
export { PurgeConversationWorkflow } from './purge';
export { EvalRunWorkflow } from './eval-run';
export { EvalTrialWorkflow } from './eval-trial';
export { InspectRoundWorkflow } from './eval-inspect';
export { BackgroundTaskWorkflow } from './background-task';
export { ScheduledTurnWorkflow } from './scheduled-turn';
// Worker Versioning behaviour per workflow type (pinned turns, auto-upgrading conversations).
import './versioning';
