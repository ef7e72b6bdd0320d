/** Activity options the turn's steps share. */
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';

/** Short Postgres-only steps: a timeout that fits the work, so a killed worker costs seconds. */
export const SHORT_STEP = {
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500ms', maximumAttempts: 10 },
} satisfies ActivityOptions & LocalActivityOptions;
