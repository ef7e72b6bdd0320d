/**
 * ConversationWorkflow (id `conv/<conversationId>`): serialises the turns of one conversation.
 * - `startTurn` (update) queues a prompt and returns its turn index/workflow id at once.
 * - `followup` goes into the running turn; between turns it starts the next turn exactly once.
 * - `steer` goes to the running turn; with no running turn there is nothing to steer.
 * Continues as new when Temporal suggests it and no turn is running.
 */
import {
  ApplicationFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  ParentClosePolicy,
  setHandler,
  deprecatePatch,
  patched,
  startChild,
  workflowInfo,
  allHandlersFinished,
} from '@temporalio/workflow';
import { turnIdFor, turnWorkflowId } from '../core/turn/ids';
import { normaliseEventText, normaliseText } from '../core/text';
import { formatZodError } from '../core/validation';
import type { AttachmentRef, StartTurnRequest, TurnInput, TurnOptions, UserEvent } from '../core/turn/contracts';
import type { ConversationState } from '../contract/workflows';
import {
  conversationStateQuery,
  ConversationIdKey,
  followupSignal,
  SHORT_WORKFLOW_TASK_TIMEOUT,
  startTurnUpdate,
  steerSignal,
  ProjectIdKey,
  TenantIdKey,
  TurnIndexKey,
  TurnStatusKey,
  AgentNameKey,
  AGENT_CONFLICT,
  ScheduleIdKey,
} from '../contract/definitions';
import { DEFAULT_AGENT_NAME } from '../core/agents/ref';
import { TurnWorkflow } from './turn';

/** The conversation's TenantId / ProjectId (set by the client at start), for its turns. */
function ownerSearchAttributes() {
  const sa = workflowInfo().typedSearchAttributes;
  const tenant = sa.get(TenantIdKey);
  const project = sa.get(ProjectIdKey);
  return [
    ...(tenant !== undefined ? [{ key: TenantIdKey, value: tenant }] : []),
    ...(project !== undefined ? [{ key: ProjectIdKey, value: project }] : []),
  ];
}

const SEEN_LIMIT = 512;

export async function ConversationWorkflow(initial: ConversationState): Promise<void> {
  const state: ConversationState = { ...initial, queue: [...initial.queue], seenMessages: [...initial.seenMessages] };
  let active: { turnIndex: number; workflowId: string } | null = null;

  /**
   * The bound agent. A conversation whose turns started before agents existed ran them under the
   * built-in agent, so it is bound to `default`; a new one binds at its first startTurn.
   */
  const boundAgent = (): string | undefined =>
    state.agent ?? (state.nextTurnIndex > 1 || state.queue.length > 0 ? DEFAULT_AGENT_NAME : undefined);

  const remember = (messageId: string): boolean => {
    if (state.seenMessages.includes(messageId)) return false;
    state.seenMessages.push(messageId);
    if (state.seenMessages.length > SEEN_LIMIT) state.seenMessages.splice(0, state.seenMessages.length - SEEN_LIMIT);
    return true;
  };
  const enqueue = (
    prompt: string,
    messageId: string,
    options: TurnOptions,
    attachments?: AttachmentRef[],
    scheduleId?: string,
  ) => {
    const turnIndex = state.nextTurnIndex++;
    // A followup's text comes from a signal, which cannot be refused: normalised (core/text.ts), so
    // a NUL or a lone surrogate never wedges the turn it starts. Data only, no new command: no patch.
    prompt = normaliseText(prompt);
    // The conversation keeps its model: a turn that names none runs the one its last turn named
    // (none named ever: the agent's, else the deployment's default — resolved by the worker).
    // Data only (the child's input), no new command: no patch.
    if (options.model === undefined && state.lastOptions?.model !== undefined)
      options = { ...options, model: state.lastOptions.model };
    state.queue.push({
      turnIndex,
      prompt,
      messageId,
      options,
      ...(attachments?.length ? { attachments } : {}),
      ...(scheduleId !== undefined ? { scheduleId } : {}),
    });
    state.lastOptions = options;
    return { turnIndex, turnId: turnIdFor(turnIndex), workflowId: turnWorkflowId(state.conversationId, turnIndex) };
  };

  setHandler(
    startTurnUpdate,
    (request: StartTurnRequest) => {
      const existing = state.queue.find((q) => q.messageId === request.messageId);
      if (existing)
        return {
          turnIndex: existing.turnIndex,
          turnId: turnIdFor(existing.turnIndex),
          workflowId: turnWorkflowId(state.conversationId, existing.turnIndex),
        };
      remember(request.messageId);
      // Data only, no new command: binding needs no patch (the turn input below has one).
      state.agent ??= boundAgent() ?? request.agent?.name ?? DEFAULT_AGENT_NAME;
      return enqueue(request.prompt, request.messageId, request.options, request.attachments, request.scheduleId);
    },
    {
      validator: (request: StartTurnRequest) => {
        // Required here, not imported: the contracts' zod schemas are then built once per
        // conversation workflow that validates a request, not for every workflow instance (core/turn/ids.ts).
        const { StartTurnRequestSchema } = require('../core/turn/contracts') as typeof import('../core/turn/contracts');
        const parsed = StartTurnRequestSchema.safeParse(request);
        if (!parsed.success)
          throw new Error(formatZodError(parsed.error, { source: 'startTurn update', root: 'request' }));
        if (request.conversationId !== state.conversationId)
          throw new Error(`conversation mismatch: ${request.conversationId}`);
        // A conversation belongs to one agent: a turn naming another is refused, nothing is queued.
        const bound = boundAgent();
        if (request.agent && bound !== undefined && request.agent.name !== bound)
          throw ApplicationFailure.nonRetryable(
            `conversation ${state.conversationId} is bound to agent "${bound}"; a turn cannot run agent "${request.agent.name}" in it (start a new conversation)`,
            AGENT_CONFLICT,
          );
      },
      description: 'Queue a prompt as the next turn; returns its turn index and workflow id.',
    },
  );

  const routeToTurn = async (kind: 'followup' | 'steer', event: UserEvent) => {
    if (!active) return false;
    const handle = getExternalWorkflowHandle(active.workflowId);
    try {
      // Normalised like a queued prompt: a steer with a bad character still stops the turn.
      await handle.signal(kind === 'followup' ? followupSignal : steerSignal, normaliseEventText(event) ?? event);
      return true;
    } catch (err) {
      // The turn closed between our check and the signal; its leftovers come back through its result.
      log.warn(`could not route ${kind} to ${active?.workflowId}`, { error: String(err) });
      return false;
    }
  };

  setHandler(followupSignal, async (event: UserEvent) => {
    if (!remember(event.messageId)) return;
    if (await routeToTurn('followup', event)) return;
    enqueue(event.text, event.messageId, state.lastOptions ?? {});
  });
  setHandler(steerSignal, async (event: UserEvent) => {
    if (!remember(event.messageId)) return;
    if (!(await routeToTurn('steer', event)))
      log.info('steer with no running turn ignored', { messageId: event.messageId });
  });
  setHandler(conversationStateQuery, () => ({
    conversationId: state.conversationId,
    nextTurnIndex: state.nextTurnIndex,
    activeTurn: active,
    queued: state.queue.length,
    completedTurns: state.completedTurns,
  }));

  for (;;) {
    await condition(() => state.queue.length > 0 || workflowInfo().continueAsNewSuggested);
    const next = state.queue.shift();
    if (!next) {
      await condition(allHandlersFinished);
      if (state.queue.length === 0) await continueAsNew<typeof ConversationWorkflow>(state);
      continue;
    }
    const input: TurnInput = {
      conversationId: state.conversationId,
      turnIndex: next.turnIndex,
      turnId: turnIdFor(next.turnIndex),
      prompt: {
        text: next.prompt,
        messageId: next.messageId,
        ...(next.attachments?.length ? { attachments: next.attachments } : {}),
      },
      options: next.options,
    };
    const workflowId = turnWorkflowId(state.conversationId, next.turnIndex);
    // A turn runs the conversation's bound agent, with the owner's and the agent's search attributes.
    // Both patches are retired (step one of two): every release (0.1.0 on) records their markers, so
    // no run without them — one from before agent definitions or before tenancy, whose fixtures are
    // dropped — can still be running; the deprecated markers keep the 0.1.0 runs, which recorded
    // them, replaying. Step two removes the two calls (a run's first turn then records no marker and
    // no TemporalChangeVersion upsert: 4 events, 2 visibility updates) once no run recorded by a
    // build before this one can still be running.
    deprecatePatch('agent-binding');
    deprecatePatch('tenant-search-attributes');
    const agent = state.agent ?? DEFAULT_AGENT_NAME;
    input.agent = { name: agent };
    // A schedule's run's turn carries its ScheduleId (Temporal UI lists a schedule's turns by it).
    // The patch is called for such a turn only: other turns record no marker (and no
    // TemporalChangeVersion upsert); a scheduled turn queued by an older build has no scheduleId.
    const scheduled =
      next.scheduleId !== undefined && patched('schedule-turn-attribute')
        ? [{ key: ScheduleIdKey, value: next.scheduleId }]
        : [];
    const child = await startChild(TurnWorkflow, {
      workflowId,
      args: [input],
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      workflowTaskTimeout: SHORT_WORKFLOW_TASK_TIMEOUT,
      staticSummary: `turn ${next.turnIndex}: ${next.prompt.slice(0, 120)}`,
      typedSearchAttributes: [
        { key: ConversationIdKey, value: state.conversationId },
        { key: TurnIndexKey, value: next.turnIndex },
        { key: TurnStatusKey, value: 'running' },
        ...ownerSearchAttributes(),
        { key: AgentNameKey, value: agent },
        ...scheduled,
      ],
    });
    active = { turnIndex: next.turnIndex, workflowId };
    try {
      const result = await child.result();
      // Followups that arrived after the turn's last decision boundary start the next turn, once.
      for (const ev of result.leftoverEvents) {
        if (ev.kind === 'followup') enqueue(ev.text, ev.messageId, next.options);
      }
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.error(`turn ${workflowId} failed`, { error: String(err) });
    } finally {
      active = null;
      state.completedTurns += 1;
    }
  }
}
