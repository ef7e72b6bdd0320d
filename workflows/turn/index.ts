/** The turn workflow (workflows/turn/workflow.ts): its run state, open and close steps and round steps live beside it. */
export { TurnWorkflow } from './workflow';
