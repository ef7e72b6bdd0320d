/**
 * Plans: `react.plan` snapshots and the `[OPEN PLANS]` section (plan-snapshot.ts), the lifecycle
 * commands (plan-commands.ts) and acknowledgements from notes (plan-acks.ts), in one import.
 */
export * from './plan-snapshot';
export * from './plan-commands';
export * from './plan-acks';
