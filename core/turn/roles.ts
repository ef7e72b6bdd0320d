/**
 * Worker roles and their task queues (docs/worker-roles.md). Four roles, each its own task queue:
 *
 *   workflows  workflow tasks, local activities, and the turn's short Postgres bookkeeping
 *              activities (finalize, failure records, approvals, turn slots, compaction plan/commit)
 *   models     decision rounds and every other model call (title, tool selection, synthesis,
 *              compaction's summariser, the eval judge)
 *   tools      tool activities (not exec; local tools stay on the workflow worker)
 *   exec       code execution (exec.* tools: launch and await, the exec proxy's tool calls)
 *
 * Queue names: `DREACT_TASK_QUEUE_<ROLE>` names one; else `<DREACT_TASK_QUEUE>-<role>` for models,
 * tools and exec, and `DREACT_TASK_QUEUE` itself for workflows (so a deployment that set
 * DREACT_TASK_QUEUE before roles keeps its workflows' queue); with neither, `dreact-workflows`,
 * `dreact-models`, `dreact-tools`, `dreact-exec`. Pure: the environment comes in as an argument.
 * The workflow never reads them: the worker hands them to each turn (LoadedContext.placement).
 */

export const WORKER_ROLES = ['workflows', 'models', 'tools', 'exec'] as const;
export type WorkerRole = (typeof WORKER_ROLES)[number];
/** The roles whose activities a turn schedules on their own queue. */
export type ActivityRole = Exclude<WorkerRole, 'workflows'>;

export type RoleQueues = Record<WorkerRole, string>;

export const DEFAULT_QUEUE_PREFIX = 'dreact';

const QUEUE_RE = /^[A-Za-z0-9][A-Za-z0-9_.:\-/]{0,199}$/;

function checkedQueue(name: string, where: string): string {
  if (!QUEUE_RE.test(name))
    throw new Error(
      `${where}: invalid task queue name ${JSON.stringify(name)} (letters, digits and _ . : - / only, at most 200)`,
    );
  return name;
}

/** The four queues derived from one base name: the base for workflows, `<base>-<role>` for the rest. */
export function queuesFromBase(base: string, where = 'taskQueue'): RoleQueues {
  checkedQueue(base, where);
  return {
    workflows: base,
    models: checkedQueue(`${base}-models`, where),
    tools: checkedQueue(`${base}-tools`, where),
    exec: checkedQueue(`${base}-exec`, where),
  };
}

/**
 * The task queue of each role from the environment (see the header). A bad name stops the start
 * naming the variable.
 */
export function configuredTaskQueues(env: Readonly<Record<string, string | undefined>>): RoleQueues {
  const base = env.DREACT_TASK_QUEUE?.trim() || undefined;
  if (base) checkedQueue(base, 'DREACT_TASK_QUEUE');
  const prefix = base ?? DEFAULT_QUEUE_PREFIX;
  const pick = (role: WorkerRole, fallback: string): string => {
    const name = `DREACT_TASK_QUEUE_${role.toUpperCase()}`;
    const own = env[name]?.trim();
    return checkedQueue(own || fallback, own ? name : base ? 'DREACT_TASK_QUEUE' : 'default');
  };
  return {
    workflows: pick('workflows', base ?? `${DEFAULT_QUEUE_PREFIX}-workflows`),
    models: pick('models', `${prefix}-models`),
    tools: pick('tools', `${prefix}-tools`),
    exec: pick('exec', `${prefix}-exec`),
  };
}

/**
 * `--roles models,tools` / DREACT_WORKER_ROLES: a comma-separated subset of the four (`all`, or
 * empty, for all of them), in the canonical order. An unknown role is an error naming `source`.
 */
export function parseWorkerRoles(raw: string | readonly string[] | undefined, source = 'roles'): WorkerRole[] {
  const items = (typeof raw === 'string' ? raw.split(',') : (raw ?? [])).map((r) => r.trim()).filter(Boolean);
  if (items.length === 0 || (items.length === 1 && items[0] === 'all')) return [...WORKER_ROLES];
  for (const r of items) {
    if (!(WORKER_ROLES as readonly string[]).includes(r))
      throw new Error(
        `${source}: unknown worker role ${JSON.stringify(r)} (use any of ${WORKER_ROLES.join(', ')}, or all)`,
      );
  }
  return WORKER_ROLES.filter((r) => items.includes(r));
}

/** The activity role of a tool call: exec for the code-execution tools, tools otherwise. */
export function toolRole(tool: { id: string; consumesCode?: boolean }): ActivityRole {
  return tool.consumesCode || tool.id.startsWith('exec.') ? 'exec' : 'tools';
}
