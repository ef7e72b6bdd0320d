/**
 * Reconciles the schedules agent files declare (`schedules:`, core/schedules/agent-schedules.ts)
 * with the Temporal Schedules of this workflows queue, at worker start: a declared one that is
 * missing is created, one whose definition changed is updated, and a managed one no file declares
 * any more is deleted. Managed schedules are the rows with this queue in `managed_queue` and the
 * memo `managedBy: 'agent-file'`; a schedule a user made (CLI, gateway) has neither and is never
 * touched. Owned by the local tenant (agent files are the deployment's). Idempotent: two workers
 * starting together converge on the same schedules.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Pool } from 'pg';
import { agentScheduleId, agentScheduleInput } from '../core/schedules/agent-schedules';
import type { ScheduleInput } from '../core/schedules/spec';
import { LOCAL_TENANT } from '../core/tenancy/principal';
import type { ScheduleOwner } from '../core/schedules/run';
import type { AgentDefinition } from '../core/agents/definition';
import { deleteScheduleRow, managedSchedules, saveSchedule } from '../store/schedules/schedule-store';
import { ScheduleService } from '../client/schedules/service';
import { scheduleUpdate } from '../client/schedules/options';

export interface ReconcileReport {
  added: string[];
  changed: string[];
  removed: string[];
}

const OWNER: ScheduleOwner = { ...LOCAL_TENANT, userId: null };

export async function reconcileAgentSchedules(
  temporal: Client,
  pool: Pool,
  queue: string,
  agents: ReadonlyArray<{ definition: Pick<AgentDefinition, 'name' | 'schedules'> }>,
): Promise<ReconcileReport> {
  const declared = new Map<string, { input: ScheduleInput; conversationId: string | undefined }>();
  for (const { definition } of agents)
    for (const s of definition.schedules ?? []) {
      const input = agentScheduleInput(definition.name, s);
      declared.set(agentScheduleId(definition.name, s.name, queue), { input, conversationId: input.conversation });
    }
  const report: ReconcileReport = { added: [], changed: [], removed: [] };
  const existing = new Map((await managedSchedules(pool, queue)).map((r) => [r.id, r]));
  const svc = new ScheduleService(temporal, pool, queue);
  for (const [id, { input, conversationId }] of declared) {
    const row = existing.get(id);
    const args = {
      id,
      input,
      owner: OWNER,
      ...(conversationId !== undefined ? { conversationId } : {}),
      taskQueue: queue,
      managed: true,
    };
    if (!row) {
      const secret = input.webhook ? randomBytes(32).toString('base64url') : undefined;
      try {
        await svc.put({ id, input, owner: OWNER, conversationId, webhookSecret: secret, managedQueue: queue });
        report.added.push(id);
        continue;
      } catch (err) {
        if (!(err instanceof ScheduleAlreadyRunning)) throw err;
        // Its row was lost (a restored database): written again, the schedule brought up to date.
      }
    } else if (
      isDeepStrictEqual(row.definition, JSON.parse(JSON.stringify(input))) &&
      row.conversationId === (conversationId ?? null)
    )
      continue;
    await saveSchedule(pool, {
      id,
      ...OWNER,
      agent: input.agent,
      definition: input,
      conversationId: conversationId ?? null,
      managedQueue: queue,
      webhookSecret: row?.webhookSecret ?? null,
    });
    await temporal.schedule.getHandle(id).update(scheduleUpdate(args));
    report.changed.push(id);
  }
  for (const id of existing.keys()) {
    if (declared.has(id)) continue;
    try {
      const handle = temporal.schedule.getHandle(id);
      const memo = (await handle.describe()).memo?.dreact as { managedBy?: string } | undefined;
      if (memo?.managedBy === 'agent-file') await handle.delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
    await deleteScheduleRow(pool, id);
    report.removed.push(id);
  }
  return report;
}
