/**
 * Scheduled agents for a caller (issue 44, item 1): create, list, describe, pause, unpause,
 * trigger, backfill and delete schedules — Temporal Schedules (ScheduleClient) whose runs are
 * ScheduledTurnWorkflow (workflows/scheduled-turn.ts) — shared by the CLI and the gateway. Every
 * call is scoped by the caller: a schedule of another tenant or project is unknown (`not_found`,
 * never `forbidden`), another user's schedule of the same project is reachable with the `admin`
 * scope only (or by a project-wide key). A definition is checked (core/schedules/spec.ts) before
 * anything is written.
 */
import { randomBytes } from 'node:crypto';
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { DreactError } from '../errors';
import { formatZodError } from '../../core/validation';
import {
  describeWhen,
  ScheduleInputSchema,
  type ScheduleInput,
  type ScheduleInputRaw,
} from '../../core/schedules/spec';
import type { ScheduleOwner } from '../../core/schedules/run';
import { hasScope, type Principal } from '../../core/tenancy/principal';
import { clientConversationId, scopeConversationId } from '../../core/tenancy/conversation-space';
import { canSee, conversationOwner } from '../../store/tenancy-store';
import {
  deleteScheduleRow,
  listSchedules,
  loadSchedule,
  saveSchedule,
  setSchedulePaused,
  type ScheduleRow,
} from '../../store/schedules/schedule-store';
import { listRuns, type ScheduleRunRow } from '../../store/schedules/run-store';
import { scheduleOptions } from './options';

export interface ScheduleSummary {
  id: string;
  agent: string;
  when: string;
  prompt: string;
  paused: boolean;
  overlap: ScheduleInput['overlap'];
  /** The conversation every run goes to, as the caller names it (null: a new one each run). */
  conversation: string | null;
  managed: boolean;
  owner: ScheduleOwner;
  nextRuns: string[];
}

export interface ScheduleDetails extends ScheduleSummary {
  definition: ScheduleInput;
  note: string | null;
  actionsTaken: number;
  skippedOverlap: number;
  missedCatchup: number;
  running: string[];
  runs: Array<Omit<ScheduleRunRow, 'conversationId'> & { conversation: string | null }>;
}

export interface CreatedSchedule {
  id: string;
  /** The webhook signing secret (shown once, at create; only with a webhook). */
  webhookSecret?: string;
}

const ownerOf = (p: Principal): ScheduleOwner => ({ tenantId: p.tenantId, projectId: p.projectId, userId: p.userId });

/** Whether `p` may act on the schedule: same tenant and project; another user's with admin (or a project-wide key). */
export function mayReach(p: Principal, row: Pick<ScheduleRow, 'tenantId' | 'projectId' | 'userId'>): boolean {
  if (row.tenantId !== p.tenantId || row.projectId !== p.projectId) return false;
  return p.userId === null || row.userId === p.userId || hasScope(p, 'admin');
}

export function checkScheduleInput(raw: unknown): ScheduleInput {
  const parsed = ScheduleInputSchema.safeParse(raw);
  if (!parsed.success) throw new DreactError(formatZodError(parsed.error), 'bad_input');
  return parsed.data;
}

export class ScheduleService {
  constructor(
    readonly temporal: Client,
    readonly pool: Pool,
    /** The workflows queue the runs are started on. */
    readonly taskQueue: string,
  ) {}

  private async row(p: Principal, id: string): Promise<ScheduleRow> {
    const row = await loadSchedule(this.pool, id);
    if (!row || !mayReach(p, row)) throw new DreactError(`no schedule "${id}"`, 'not_found');
    return row;
  }

  /** Checks and creates a schedule owned by `p`; its id (and webhook secret) back. */
  async create(p: Principal, raw: ScheduleInputRaw): Promise<CreatedSchedule> {
    const input = checkScheduleInput(raw);
    let conversationId: string | undefined;
    if (input.conversation !== undefined) {
      const scoped = scopeConversationId(p, input.conversation);
      const owner = await conversationOwner(this.pool, scoped.id);
      if ((owner && !canSee(p, owner)) || (!owner && !scoped.mayCreate))
        throw new DreactError(`no conversation "${input.conversation}"`, 'not_found');
      conversationId = scoped.id;
    }
    const id = `sch_${randomBytes(6).toString('hex')}`;
    const webhookSecret = input.webhook ? randomBytes(32).toString('base64url') : undefined;
    return this.put({ id, input, owner: ownerOf(p), conversationId, webhookSecret, managedQueue: null });
  }

  /** Writes the owner row, then the Temporal Schedule (the row goes again when Temporal refuses). */
  async put(a: {
    id: string;
    input: ScheduleInput;
    owner: ScheduleOwner;
    conversationId: string | undefined;
    webhookSecret: string | undefined;
    managedQueue: string | null;
  }): Promise<CreatedSchedule> {
    await saveSchedule(this.pool, {
      id: a.id,
      ...a.owner,
      agent: a.input.agent,
      definition: a.input,
      conversationId: a.conversationId ?? null,
      managedQueue: a.managedQueue,
      webhookSecret: a.webhookSecret ?? null,
    });
    try {
      await this.temporal.schedule.create(
        scheduleOptions({
          id: a.id,
          input: a.input,
          owner: a.owner,
          ...(a.conversationId !== undefined ? { conversationId: a.conversationId } : {}),
          taskQueue: this.taskQueue,
          managed: a.managedQueue !== null,
        }),
      );
    } catch (err) {
      await deleteScheduleRow(this.pool, a.id);
      throw err;
    }
    return { id: a.id, ...(a.webhookSecret ? { webhookSecret: a.webhookSecret } : {}) };
  }

  /** The caller's schedules (a user-bound key without admin: its user's), oldest first. */
  async list(p: Principal): Promise<ScheduleSummary[]> {
    const rows = await listSchedules(this.pool, {
      tenantId: p.tenantId,
      projectId: p.projectId,
      ...(p.userId !== null && !hasScope(p, 'admin') ? { userId: p.userId } : {}),
    });
    // A schedule deleted in Temporal meanwhile is left out.
    const all = await Promise.all(
      rows.map((r) =>
        this.summary(p, r).then(
          (s) => s.summary,
          () => undefined,
        ),
      ),
    );
    return all.filter((s): s is ScheduleSummary => s !== undefined);
  }

  private async summary(p: Principal, row: ScheduleRow) {
    const desc = await this.temporal.schedule.getHandle(row.id).describe();
    const d = row.definition;
    const summary: ScheduleSummary = {
      id: row.id,
      agent: row.agent,
      when: describeWhen(d),
      prompt: d.prompt,
      paused: desc.state.paused,
      overlap: d.overlap,
      conversation: row.conversationId !== null ? clientConversationId(p, row.conversationId) : null,
      managed: row.managedQueue !== null,
      owner: { tenantId: row.tenantId, projectId: row.projectId, userId: row.userId },
      nextRuns: desc.info.nextActionTimes.map((t) => t.toISOString()),
    };
    return { summary, desc };
  }

  /** A schedule with its next runs and its last runs (their conversation, turn and outcome). */
  async describe(p: Principal, id: string, runs = 20): Promise<ScheduleDetails> {
    const row = await this.row(p, id);
    const { summary, desc } = await this.summary(p, row).catch((err: unknown) => {
      if (err instanceof ScheduleNotFoundError) throw new DreactError(`no schedule "${id}"`, 'not_found');
      throw err;
    });
    return {
      ...summary,
      definition: row.definition,
      note: desc.state.note ?? null,
      actionsTaken: desc.info.numActionsTaken,
      skippedOverlap: desc.info.numActionsSkippedOverlap,
      missedCatchup: desc.info.numActionsMissedCatchupWindow,
      running: desc.info.runningActions.map((a) => a.workflow.workflowId),
      runs: (await listRuns(this.pool, id, runs)).map(({ conversationId, ...r }) => ({
        ...r,
        conversation: conversationId !== null ? clientConversationId(p, conversationId) : null,
      })),
    };
  }

  async pause(p: Principal, id: string, note?: string): Promise<void> {
    await this.row(p, id);
    await this.temporal.schedule.getHandle(id).pause(note ?? 'paused');
    await setSchedulePaused(this.pool, id, true);
  }

  async unpause(p: Principal, id: string, note?: string): Promise<void> {
    await this.row(p, id);
    await this.temporal.schedule.getHandle(id).unpause(note ?? 'unpaused');
    await setSchedulePaused(this.pool, id, false);
  }

  /** Runs the schedule now (whatever its overlap policy says about a run in progress). */
  async trigger(p: Principal, id: string): Promise<void> {
    await this.row(p, id);
    await this.temporal.schedule.getHandle(id).trigger('ALLOW_ALL');
  }

  /** Takes the runs the schedule would have taken from `from` to `to` (each once, concurrently). */
  async backfill(p: Principal, id: string, from: Date, to: Date): Promise<void> {
    if (!(from.getTime() < to.getTime())) throw new DreactError('backfill: --from must be before --to', 'bad_input');
    await this.row(p, id);
    await this.temporal.schedule.getHandle(id).backfill({ start: from, end: to, overlap: 'ALLOW_ALL' });
  }

  /** Deletes the schedule (its past runs and their conversations stay). */
  async delete(p: Principal, id: string): Promise<void> {
    await this.row(p, id);
    try {
      await this.temporal.schedule.getHandle(id).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
    await deleteScheduleRow(this.pool, id);
  }
}
