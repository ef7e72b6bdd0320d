/**
 * The durable-react worker of one process: one SDK `Worker` per role it runs (core/turn/roles.ts),
 * all on the same NativeConnection, started and stopped together. `run`, `runUntil`, `shutdown`
 * and `getState` act on all of them, as the SDK Worker's do on one: a role worker that fails stops
 * the others, and `run` rejects with its error.
 */
import type { State, Worker, WorkerOptions } from '@temporalio/worker';
import type { RoleQueues, WorkerRole } from '../core/turn/roles';

export class DreactWorker {
  /** The SDK Worker of each role this process runs, in role order. */
  readonly workers: ReadonlyMap<WorkerRole, Worker>;
  /** Every role's queue (the ones this process does not run included: the turns schedule on them). */
  readonly queues: RoleQueues;
  private running: Promise<void> | undefined;
  private readonly onStop: () => Promise<void>;

  constructor(workers: ReadonlyMap<WorkerRole, Worker>, queues: RoleQueues, onStop: () => Promise<void>) {
    if (workers.size === 0) throw new Error('a worker needs at least one role');
    this.workers = workers;
    this.queues = queues;
    this.onStop = onStop;
  }

  get roles(): WorkerRole[] {
    return [...this.workers.keys()];
  }

  /** The first role's worker options (the workflows role's when it runs here): taskQueue, deployment. */
  get options(): WorkerOptions & { taskQueue: string } {
    return [...this.workers.values()][0]!.options as WorkerOptions & { taskQueue: string };
  }

  /** Every role's state when they agree; else the first one that is not RUNNING (FAILED first). */
  getState(): State {
    const states = [...this.workers.values()].map((w) => w.getState());
    if (states.includes('FAILED')) return 'FAILED';
    return states.find((s) => s !== 'RUNNING') ?? 'RUNNING';
  }

  /** Each role's state, for /readyz. */
  states(): Array<{ role: WorkerRole; queue: string; state: State }> {
    return [...this.workers].map(([role, w]) => ({ role, queue: this.queues[role], state: w.getState() }));
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      const runs = [...this.workers.values()].map((w) =>
        w.run().catch((err: unknown) => {
          // One role failed: the others stop too, and the process sees the failure.
          this.shutdown();
          throw err;
        }),
      );
      try {
        const settled = await Promise.allSettled(runs);
        const failed = settled.find((r) => r.status === 'rejected');
        if (failed) throw (failed as PromiseRejectedResult).reason;
      } finally {
        await this.onStop();
      }
    })();
    return this.running;
  }

  shutdown(): void {
    for (const w of this.workers.values()) {
      if (w.getState() === 'RUNNING') w.shutdown();
    }
  }

  /** Runs every role until `fn` settles, then shuts them down and waits for them (Worker.runUntil). */
  async runUntil<R>(fn: Promise<R> | (() => Promise<R>)): Promise<R> {
    const running = this.run();
    const stopped = running.then(() => {
      throw new Error('the worker stopped before runUntil’s promise settled');
    });
    try {
      return await Promise.race([typeof fn === 'function' ? fn() : fn, stopped]);
    } finally {
      this.shutdown();
      await running.catch(() => undefined);
      stopped.catch(() => undefined);
    }
  }
}
