/**
 * The exec.python tool: a declaration (core/exec/tool.ts) and an implementation that runs as two
 * activities through the tool-activity seam — `execLaunch` (ToolImpl.launch: materialise the
 * workspace, start the tool supervisor, start the sandbox) and `execAwait` (ToolImpl.run: poll with
 * heartbeats, stop on cancellation, collect, store outputs as `fi:<turn>.outputs/<file>` artifacts
 * and return the envelope, which the tool activity records as the `react.tool.result` block).
 *
 * Idempotent on the exec id (hash of conversation + call id; the call id derives from workflow id +
 * round + action index): every step is re-derivable, a retried launch finds the exec already
 * started or finished (`backend.find`) and never starts a second one.
 */
import { recordExecLaunch } from '../telemetry/metrics';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { blockId } from '../../core/timeline/block';
import { stableHash } from '../../core/ids';
import {
  buildEnvelope,
  checkCode,
  declareExecPython,
  execIdFor,
  execPython,
  execSummary,
  EXEC_DEFAULT_TIMEOUT_S,
  ExecPythonParamsSchema,
  type ExecPythonParams,
} from '../../core/exec';
import { createToolRegistry } from '../../core/tools';
import type { AnyToolDeclaration, ToolRegistry } from '../../core/tools/registry';
import { activityLog } from '../log';
import { builtinTools } from '../tools';
import type { ToolContext, ToolImpl, ToolObservation } from '../tools/types';
import type { ExecBackend, ExecHandle, ExecLimits, ExecSpec } from './backend';
import { DockerBackend } from './docker';
import { LocalBackend } from './local';
import { WasmBackend } from './wasm/backend';
import { ToolSupervisor } from './proxy/supervisor';
import type { AgentToolContext } from '../agents/define-tool';
import { DEFAULT_EXEC_LIMITS } from './sandbox-files';
import { materialiseWorkspace, storeOutputs } from './workspace';
import type { AgentExec } from '../../core/agents/definition';

const backendsOfImpl = new WeakMap<ToolImpl, () => string[]>();

/**
 * The agents whose `exec.backend` names a backend this worker's exec tool cannot run — a start-time
 * error naming each agent and backend (empty: fine, or no exec tool among `tools`).
 */
export function agentExecProblems(
  agents: ReadonlyArray<{ ref: { name: string }; definition: { exec?: AgentExec } }>,
  tools: ReadonlyArray<{ impl: ToolImpl }>,
): string[] {
  const names = tools.map((t) => backendsOfImpl.get(t.impl)).find((f) => f !== undefined)?.();
  if (!names) return [];
  return agents.flatMap((a) => {
    const wanted = a.definition.exec?.backend;
    return wanted === undefined || names.includes(wanted)
      ? []
      : [
          `agent ${a.ref.name}: exec.backend "${wanted}" is not a backend this worker runs (it runs: ${names.join(', ')})`,
        ];
  });
}

/** The backend names a worker's exec tool runs: its own and the others it may start. */
export function execBackendNames(opts: Pick<ExecToolOptions, 'backends'>, own: { name: string }): string[] {
  return [...new Set([own.name, ...Object.keys(opts.backends ?? {})])];
}

export interface ExecToolOptions {
  /** The sandbox backend; default: DREACT_EXEC_BACKEND (local | docker | wasm), created on first use. */
  backend?: ExecBackend;
  /** Other backends by name (e.g. fargate), for DREACT_EXEC_BACKEND. */
  backends?: Record<string, () => ExecBackend>;
  /** Host root of the per-exec work/out/logs/runtime dirs (default DREACT_EXEC_WORK_DIR or <tmp>/dreact-exec-work). */
  workRoot?: string;
  limits?: Partial<ExecLimits>;
  /** Tool proxy: implementations and declarations the supervisor runs (default: the built-ins); false turns it off. */
  proxy?: { tools?: ReadonlyMap<string, ToolImpl>; registry?: ToolRegistry } | false;
  /** Status poll interval, ms (backs off to 4× while the program runs). */
  pollMs?: number;
}

/** The backend DREACT_EXEC_BACKEND names. */
export function execBackendFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  extra: Record<string, () => ExecBackend> = {},
): ExecBackend {
  const name = env.DREACT_EXEC_BACKEND ?? 'local';
  if (extra[name]) return extra[name]();
  if (name === 'local') return new LocalBackend();
  if (name === 'docker') return new DockerBackend();
  if (name === 'wasm') return new WasmBackend();
  throw ApplicationFailure.create({
    type: 'ExecRefused',
    nonRetryable: true,
    message: `DREACT_EXEC_BACKEND=${name}: no such exec backend in this worker (local | docker | wasm${Object.keys(
      extra,
    )
      .map((k) => ` | ${k}`)
      .join('')})`,
  });
}

const supervisors = new Map<string, ToolSupervisor>();

/** An agent's `exec` limits over the worker's (docs/agents.md `exec.limits`). */
export function agentExecLimits(l: NonNullable<AgentExec['limits']> | undefined): Partial<ExecLimits> {
  if (!l) return {};
  const mb = 1024 * 1024;
  return {
    ...(l.timeout_seconds !== undefined ? { wallTimeMs: l.timeout_seconds * 1000 } : {}),
    ...(l.memory_mb !== undefined ? { memoryBytes: l.memory_mb * mb } : {}),
    ...(l.cpus !== undefined ? { cpus: l.cpus } : {}),
    ...(l.max_processes !== undefined ? { maxProcesses: l.max_processes } : {}),
    ...(l.max_file_mb !== undefined ? { maxFileBytes: l.max_file_mb * mb } : {}),
    ...(l.max_output_files !== undefined ? { maxOutputFiles: l.max_output_files } : {}),
    ...(l.max_output_mb !== undefined ? { maxOutputBytes: l.max_output_mb * mb } : {}),
    ...(l.max_log_kb !== undefined ? { maxLogBytes: l.max_log_kb * 1024 } : {}),
  };
}

/** The agent's sandbox of a call (its `exec` block), from the tool context the tool activity passes. */
function agentExecOf(ctx: ToolContext): AgentExec | undefined {
  return (ctx as AgentToolContext).agent?.settings.exec;
}

export function createExecTool(opts: ExecToolOptions = {}): { declaration: AnyToolDeclaration; impl: ToolImpl } {
  let backend = opts.backend;
  const defaultBackend = () => (backend ??= execBackendFromEnv(process.env, opts.backends));
  const others = new Map<string, ExecBackend>();
  /** The backend a call runs on: its agent's `exec.backend` when it names one, else the worker's. */
  const backendFor = (ctx: ToolContext): ExecBackend => {
    const wanted = agentExecOf(ctx)?.backend;
    const own = defaultBackend();
    if (wanted === undefined || wanted === own.name) return own;
    let b = others.get(wanted);
    if (!b) {
      const make = opts.backends?.[wanted];
      if (!make)
        throw ApplicationFailure.create({
          type: 'ExecRefused',
          nonRetryable: true,
          message: `agent ${(ctx as AgentToolContext).agent?.ref.name ?? '?'} asks for exec backend "${wanted}", which this worker does not run (it runs: ${execBackendNames(opts, own).join(', ')})`,
        });
      b = make();
      others.set(wanted, b);
    }
    return b;
  };
  const workRoot = opts.workRoot ?? process.env.DREACT_EXEC_WORK_DIR ?? path.join(os.tmpdir(), 'dreact-exec-work');
  const proxy =
    opts.proxy === false
      ? undefined
      : { tools: opts.proxy?.tools ?? builtinTools(), registry: opts.proxy?.registry ?? createToolRegistry() };
  const pollMs = opts.pollMs ?? 100;
  const declaration = declareExecPython(opts.backend?.name ?? process.env.DREACT_EXEC_BACKEND ?? 'local');

  async function specFor(
    ctx: ToolContext,
    params: ExecPythonParams,
  ): Promise<{ spec: ExecSpec; code: ReturnType<typeof checkCode> }> {
    const callBlockId = blockId(ctx.turnId, 'react.tool.call', ctx.callId);
    const call = (await ctx.store.blocks()).find((b) => b.id === callBlockId);
    const recorded = call?.text ? (JSON.parse(call.text) as { code?: unknown }) : {};
    const code = checkCode(recorded.code);
    const execId = execIdFor(ctx.conversationId, ctx.callId);
    // Short: the supervisor's socket lives under this folder and a Unix socket path has at most
    // 107 bytes (a longer id — a tenant-scoped one — is hashed).
    const convDir = /^[A-Za-z0-9_-]{1,24}$/.test(ctx.conversationId)
      ? ctx.conversationId
      : `c-${stableHash(ctx.conversationId)}`;
    const base = path.join(workRoot, convDir, execId);
    // The agent's limits over the worker's; the call's own timeout_s only within the agent's.
    const agentExec = agentExecOf(ctx);
    const agentLimits = agentExecLimits(agentExec?.limits);
    const ceiling = agentLimits.wallTimeMs;
    const asked = params.timeout_s !== undefined ? params.timeout_s * 1000 : undefined;
    const wallTimeMs =
      asked !== undefined
        ? Math.min(asked, ceiling ?? asked)
        : (ceiling ?? opts.limits?.wallTimeMs ?? EXEC_DEFAULT_TIMEOUT_S * 1000);
    const limits: ExecLimits = { ...DEFAULT_EXEC_LIMITS, ...opts.limits, ...agentLimits, wallTimeMs };
    const spec: ExecSpec = {
      execId,
      conversationId: ctx.conversationId,
      turnId: ctx.turnId,
      language: 'python',
      code: code.ok ? code.code : '',
      workDir: path.join(base, 'work'),
      outputDir: path.join(base, 'out'),
      logDir: path.join(base, 'logs'),
      ...(proxy ? { supervisorSocket: path.join(base, 'runtime', 'supervisor.sock') } : {}),
      limits,
      ...(agentExec?.image ? { image: agentExec.image } : {}),
    };
    return { spec, code };
  }

  async function ensureSupervisor(ctx: ToolContext, spec: ExecSpec): Promise<void> {
    if (!proxy || !spec.supervisorSocket || supervisors.has(spec.execId)) return;
    await fs.mkdir(path.dirname(spec.supervisorSocket), { recursive: true, mode: 0o711 });
    const sup = new ToolSupervisor({
      socketPath: spec.supervisorSocket,
      store: ctx.store,
      conversationId: ctx.conversationId,
      turnId: ctx.turnId,
      callId: ctx.callId,
      execId: spec.execId,
      tools: proxy.tools,
      registry: proxy.registry,
      // The turn's own tools (its agent's registry, MCP tools included) when the tool activity passes them.
      ...((ctx as AgentToolContext).toolset ? { toolset: (ctx as AgentToolContext).toolset } : {}),
      // Its agent and secrets, for the agent's own tools called from the program.
      agentContext: { agent: (ctx as AgentToolContext).agent, secrets: (ctx as AgentToolContext).secrets },
      now: ctx.now,
    });
    supervisors.set(spec.execId, sup);
    try {
      await sup.listen();
    } catch (err) {
      supervisors.delete(spec.execId);
      throw err;
    }
  }

  async function closeSupervisor(execId: string): Promise<void> {
    const sup = supervisors.get(execId);
    supervisors.delete(execId);
    await sup?.close();
  }

  /** Starts the exec unless it already exists; returns its handle. */
  async function launchExec(ctx: ToolContext, spec: ExecSpec): Promise<ExecHandle> {
    const b = backendFor(ctx);
    const found = await b.find(spec);
    if (found) {
      await ensureSupervisor(ctx, spec);
      recordExecLaunch(b.name, 'attached');
      return found;
    }
    await materialiseWorkspace(ctx, spec);
    await ensureSupervisor(ctx, spec);
    const handle = await b.start(spec, ctx.signal).catch((err: unknown) => {
      recordExecLaunch(b.name, 'failed');
      throw err;
    });
    recordExecLaunch(b.name, 'launched');
    activityLog().info('exec started', { execId: spec.execId, backend: b.name, ref: handle.ref });
    ctx.stream('exec', { phase: 'launched', execId: spec.execId, backend: b.name });
    return handle;
  }

  const impl: ToolImpl = {
    id: execPython.id,
    async launch(params, ctx) {
      const p = ExecPythonParamsSchema.parse(params);
      const { spec, code } = await specFor(ctx, p);
      if (!code.ok) return; // the await step reports it
      const handle = await launchExec(ctx, spec);
      if (ctx.signal.aborted) await backendFor(ctx).stop(handle, 'steer: cancelled during launch');
    },
    async run(params, ctx): Promise<ToolObservation> {
      const p = ExecPythonParamsSchema.parse(params);
      const { spec, code } = await specFor(ctx, p);
      if (!code.ok) return { ok: false, text: code.reason, meta: { exec_refused: 'no_code' } };
      const b = backendFor(ctx);
      const handle = await launchExec(ctx, spec); // re-attach (or launch, when no launch step ran)
      try {
        let wait = pollMs;
        for (;;) {
          if (ctx.signal.aborted) {
            await b.stop(handle, 'steer: the exec was cancelled');
            await waitTerminal(b, handle, 10_000);
            await b.collect(handle, spec); // releases the sandbox: no orphan container
            throw new Error(`exec ${spec.execId} cancelled`);
          }
          const s = await b.status(handle, ctx.signal);
          ctx.heartbeat({ callId: ctx.callId, handle, state: s.state });
          if (s.state !== 'starting' && s.state !== 'running') break;
          await sleep(wait, ctx.signal);
          wait = Math.min(wait * 2, pollMs * 4);
        }
        const collected = await b.collect(handle, spec);
        const u = collected.usage;
        if (u && (u.vcpuSeconds ?? 0) + (u.gbSeconds ?? 0) > 0) {
          // What the sandbox billed (Fargate: vCPU- and GB-seconds) goes into the usage ledger once.
          await ctx.store.recordExecUsage({
            turnId: ctx.turnId,
            round: 0,
            execId: spec.execId,
            backend: b.name,
            vcpuSeconds: u.vcpuSeconds ?? 0,
            gbSeconds: u.gbSeconds ?? 0,
            ...(u.costUsd !== undefined ? { costUsd: u.costUsd } : {}),
          });
        }
        if (collected.logTail)
          ctx.stream('exec', { phase: 'output', execId: spec.execId, backend: b.name, text: collected.logTail });
        const storeErrors = await storeOutputs(ctx, spec, collected);
        const envelope = buildEnvelope({ turnId: ctx.turnId, contract: p.contract, collected, storeErrors });
        const summary = execSummary(b.name, envelope);
        activityLog().info(summary, {
          execId: spec.execId,
          state: collected.status.state,
          exitCode: collected.status.exitCode,
        });
        ctx.stream('exec', {
          phase: 'finished',
          execId: spec.execId,
          backend: b.name,
          ok: envelope.ok,
          state: collected.status.state,
          summary,
        });
        const { report_text: reportText, ...rest } = envelope;
        return {
          ok: envelope.ok,
          text: reportText,
          meta: { ...rest, exec_id: spec.execId, backend: b.name, summary, usage: collected.usage ?? null },
        };
      } finally {
        await closeSupervisor(spec.execId);
      }
    },
  };
  backendsOfImpl.set(impl, () => execBackendNames(opts, defaultBackend()));
  return { declaration, impl };
}

async function waitTerminal(b: ExecBackend, h: ExecHandle, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const s = await b.status(h);
    if (s.state !== 'starting' && s.state !== 'running') return;
    await sleep(100);
  }
  throw new Error(`exec ${h.execId}: still running ${timeoutMs} ms after stop`);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
