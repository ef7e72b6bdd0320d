/** Workflow bundle of the benches: the production workflows plus the no-op baseline. */
export * from '../workflows';
export { NoopRoundsWorkflow } from './noop-workflow';
