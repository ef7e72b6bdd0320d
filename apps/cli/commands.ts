/**
 * CLI command implementations (argument parsing lives in main.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { followEvents, type StreamEvent } from '../../store/stream-bus';
import { DreactError, type StartedTurn } from '../../client/api';
import type { AttachmentUpload } from '../../client/attachments/preflight';
import { stageTurnAttachments } from '../../client/attachments/stage';
import { listTurns } from '../../store/turn-store';
import { loadStreamSeq } from '../../store/conversation-store';
import type { Block } from '../../core/timeline/block';
import { loadBlocks } from '../../store/timeline-store';
import { turnWorkflowId, type TurnOptionsInput, type TurnResult } from '../../core/turn/contracts';
import { createLiveRenderer } from './render';
import { debugRender, latestTurnAgent } from './debug-render';
import { loadAgentVersion } from '../../store/agent-store';
import { workflowUrl, type Session } from './session';
import { withSession } from './with-session';
import { turnStateQuery } from '../../contract/definitions';

const err = (line: string) => process.stderr.write(`${line}\n`);

export function newConversationId(): string {
  return `c_${randomBytes(5).toString('hex')}`;
}

export interface TurnCommandOptions {
  conversation?: string;
  /** An agent name, or the path of an agent file (loaded by the embedded worker). */
  agent?: string;
  /** Absent: the agent's model (else the worker's default). */
  provider?: 'scripted' | 'anthropic' | 'openai';
  script?: string;
  model?: string;
  maxRounds?: number;
  json?: boolean;
  /** Files to attach (read and preflighted before anything is stored). */
  attach?: string[];
}

/** Reads the files named on the command line; an unreadable one is a clear bad_input error. */
async function readAttachments(files: readonly string[]): Promise<AttachmentUpload[]> {
  const uploads: AttachmentUpload[] = [];
  for (const file of files) {
    try {
      const info = await stat(file);
      if (!info.isFile()) throw new Error('not a regular file');
      uploads.push({ name: basename(file), bytes: await readFile(file) });
    } catch (err) {
      throw new DreactError(`--attach ${file}: ${(err as Error).message}`, 'bad_input');
    }
  }
  return uploads;
}

/** `--agent` as a file path (it names a file: a slash or an agent file extension) or undefined for a name. */
export function agentFileArg(agent: string | undefined): string | undefined {
  if (agent === undefined) return undefined;
  return /[/\\]/.test(agent) || /\.(ya?ml|json)$/i.test(agent) ? agent : undefined;
}

export async function turnCommand(prompt: string, opts: TurnCommandOptions): Promise<void> {
  const conversationId = opts.conversation ?? newConversationId();
  const uploads = await readAttachments(opts.attach ?? []);
  const agentFile = agentFileArg(opts.agent);
  // A file's agent is named by its file name (the loader checks that the two agree).
  const agent = agentFile ? basename(agentFile).replace(/\.(ya?ml|json)$/i, '') : opts.agent;
  await withSession(
    async (s) => {
      const model = {
        ...(opts.provider ? { provider: opts.provider } : {}),
        ...(opts.script ? { script: opts.script } : {}),
        ...(opts.model ? { model: opts.model } : {}),
      };
      const options: TurnOptionsInput = {
        ...(Object.keys(model).length > 0 ? { model } : {}),
        ...(opts.maxRounds ? { maxRounds: opts.maxRounds } : {}),
      };
      const messageId = `msg_${randomUUID()}`;
      const attachments = await stageTurnAttachments(
        s.db.pool,
        { conversationId, prompt, messageId, options },
        uploads,
      );
      const afterSeq = await streamOffset(s, conversationId);
      const started = await s.api.startTurn(conversationId, prompt, options, messageId, attachments, undefined, agent);
      const out = opts.json ? err : (line: string) => process.stdout.write(line);
      if (!opts.json) out(`conversation ${conversationId} · turn ${started.turnIndex} · ${started.workflowId}\n`);
      const result = await followTurn(s, started, afterSeq, out);
      const url = workflowUrl(s.info, started.workflowId);
      if (opts.json) {
        const { inputTokens, cacheReadTokens, cacheWriteTokens, outputTokens } = result.usage;
        process.stdout.write(
          `${JSON.stringify({ conversationId, turnId: result.turnId, workflowId: result.workflowId, answer: result.answer, completionPath: result.completionPath, rounds: result.rounds, usage: { inputTokens, cacheReadTokens, cacheWriteTokens, outputTokens }, ...(result.models ? { models: result.models } : {}) })}\n`,
        );
      } else {
        // The answer streamed above; printed here only when the stream did not show it.
        if (!result.answerShown) out(`\n${result.answer}\n`);
        // The models that answered (more than one when a fallback chain moved on).
        if (result.models?.length) out(`answered by: ${result.models.map((m) => m.provider).join(', ')}\n`);
        if (url) out(`Temporal UI: ${url}\n`);
        out(`continue with: dreact turn "…" --conversation ${conversationId}\n`);
      }
    },
    agentFile ? { agentFiles: [agentFile] } : {},
  );
}

/** The conversation's current stream offset (events after it belong to what happens next). */
export async function streamOffset(s: Session, conversationId: string): Promise<number> {
  return loadStreamSeq(s.db.pool, conversationId);
}

/** Renders a turn's stream live until its `done` event, and returns the turn's result. */
export async function followTurn(
  s: Session,
  started: StartedTurn,
  afterSeq: number,
  out: (t: string) => void,
  onEvent?: (e: StreamEvent) => void,
): Promise<TurnResult & { answerShown: boolean }> {
  const render = createLiveRenderer((t) => out(t), { turnId: started.turnId });
  const abort = new AbortController();
  const following = (async () => {
    for await (const event of followEvents(s.db.pool, started.conversationId, {
      afterSeq,
      signal: abort.signal,
      listen: !s.info.pglite,
      pollMs: s.info.pglite ? 100 : 250,
    })) {
      render(event);
      onEvent?.(event);
      if (render.finished()) break;
    }
  })();
  try {
    const result = await s.api.result(started.conversationId, started.turnIndex);
    const deadline = Date.now() + 3000;
    while (!render.finished() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return { ...result, answerShown: render.answerShown() };
  } finally {
    abort.abort();
    await following;
  }
}

export async function eventCommand(
  kind: 'steer' | 'followup',
  conversationId: string,
  text: string,
  detach = false,
): Promise<void> {
  await withSession(async (s) => {
    const r =
      kind === 'steer'
        ? await s.api.steer(conversationId, text, undefined, { detach })
        : await s.api.followup(conversationId, text);
    process.stdout.write(`${kind} sent to ${r.routedTo ?? `conversation ${conversationId} (starts the next turn)`}\n`);
  });
}

export async function timelineCommand(
  conversationId: string,
  opts: { json?: boolean; debug?: boolean },
): Promise<void> {
  await withSession(async (s) => {
    const blocks = await loadBlocks(s.db.pool, conversationId);
    if (blocks.length === 0) throw new Error(`no timeline for conversation "${conversationId}"`);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(blocks, null, 2)}\n`);
      return;
    }
    if (opts.debug) {
      const ref = latestTurnAgent(blocks);
      const version = ref ? await loadAgentVersion(s.db.pool, ref.hash) : undefined;
      process.stdout.write(`${debugRender(blocks, Date.now(), version)}\n`);
      return;
    }
    process.stdout.write(timelineLines(blocks).join('\n') + '\n');
  });
}

/** The conversation's turns with their status; a failed turn shows its error. */
export async function turnsCommand(conversationId: string, opts: { json?: boolean }): Promise<void> {
  await withSession(async (s) => {
    const turns = await listTurns(s.db.pool, conversationId);
    if (turns.length === 0) throw new Error(`no turns for conversation "${conversationId}"`);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(turns, null, 2)}\n`);
      return;
    }
    for (const t of turns) {
      const how =
        t.status === 'failed'
          ? `failed: ${t.error ?? '(no message)'}`
          : t.status === 'completed'
            ? `completed (${t.completionPath ?? '?'}, ${t.rounds ?? '?'} rounds)`
            : t.status === 'queued'
              ? `queued (position ${t.queuePosition ?? '?'} under the tenant's turn limit)`
              : await liveStatus(s, conversationId, t.workflowId);
      process.stdout.write(`turn ${String(t.turnIndex).padEnd(4)} ${t.workflowId.padEnd(40)} ${how}\n`);
    }
  });
}

/** A running turn's own status (e.g. `awaiting_approval`, workflows/turn/approval-step.ts); `running` when it cannot say. */
async function liveStatus(s: Session, conversationId: string, workflowId: string): Promise<string> {
  const state = await s.temporal.workflow
    .getHandle(workflowId)
    .query(turnStateQuery)
    .catch(() => undefined);
  if (state?.status === 'awaiting_approval') return `awaiting_approval (see: dreact approvals ${conversationId})`;
  return state?.status ?? 'running';
}

/** One line per block; an exec result also shows its whole report (the envelope's report_text), indented. */
export function timelineLines(blocks: Block[]): string[] {
  return blocks.flatMap((b) => {
    const text = (b.hidden ? `[hidden] ${b.replacement_text ?? ''}` : (b.text ?? `(${b.mime} base64)`)).replace(
      /\s+/g,
      ' ',
    );
    const line = `${b.turn_id.padEnd(8)} ${b.type.padEnd(22)} ${(b.path ?? '').padEnd(44)} ${text.slice(0, 100)}`;
    const report =
      b.type === 'react.tool.result' && b.meta['tool_id'] === 'exec.python' && !b.hidden && b.text
        ? b.text.split('\n').map((l) => `    │ ${l}`)
        : [];
    return [line, ...report];
  });
}

function decodePayload(p: temporal.api.common.v1.IPayload | null | undefined): string | undefined {
  if (!p) return undefined;
  try {
    return String(defaultPayloadConverter.fromPayload(p));
  } catch (e) {
    return `(undecodable payload: ${(e as Error).message})`;
  }
}

/** A history event's type by name, without the EVENT_TYPE_ prefix; a number the SDK does not know stays a number. */
export function eventTypeName(t: temporal.api.enums.v1.EventType | string | null | undefined): string {
  const name = typeof t === 'number' ? temporal.api.enums.v1.EventType[t] : t;
  return String(name ?? t ?? '').replace(/^EVENT_TYPE_/, '');
}

export async function historyCommand(conversationId: string, opts: { turn?: number }): Promise<void> {
  await withSession(async (s) => {
    const turn = opts.turn ?? (await s.api.conversationState(conversationId)).nextTurnIndex - 1;
    if (turn < 1) throw new Error(`conversation "${conversationId}" has no turns yet`);
    const workflowId = turnWorkflowId(conversationId, turn);
    const url = workflowUrl(s.info, workflowId);
    process.stdout.write(`${workflowId}${url ? `\nTemporal UI: ${url}` : ''}\n`);
    const history = await s.temporal.workflow.getHandle(workflowId).fetchHistory();
    for (const e of history.events ?? []) {
      // fetchHistory gives the proto's enum numbers: shown by name (WORKFLOW_EXECUTION_STARTED…).
      const type = eventTypeName(e.eventType);
      const summary = decodePayload(e.userMetadata?.summary) ?? '';
      const activity = e.activityTaskScheduledEventAttributes?.activityType?.name ?? '';
      const signal = e.workflowExecutionSignaledEventAttributes?.signalName ?? '';
      const detail = [activity, signal, summary].filter(Boolean).join(' · ');
      process.stdout.write(`${String(e.eventId).padStart(4)}  ${type.padEnd(40)} ${detail}\n`);
    }
  });
}
