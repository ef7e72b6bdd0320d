/**
 * The tool supervisor of one exec: listens on the Unix socket mounted into the sandbox (the
 * sandbox's only way out), answers one JSON request per connection (`{tool_id, params}\n` →
 * `{ok, text}\n`), runs only offered tools with the runtime's implementations and parameter checks,
 * and records every call and its result in the timeline (`stage.exec.tool` blocks keyed by the exec
 * call and a sequence number, so appends are idempotent).
 *
 * Every call is decided by the same governance as the model's own calls (`toolset.governance`,
 * activities/governance/round-tools.ts callGovernance): a tool the turn's agent does not have is
 * unknown, one the tenant's or project's policy denies is refused, and one that needs a person's
 * approval — its declaration (an MCP server's destructiveHint rule), the agent's `approval.tools`,
 * the policy's require-approval list — is refused with an observation that names the tool and why:
 * a program cannot wait for a person (its sandbox has a wall-clock limit and does not outlive its
 * worker), so it asks for the call as a tool call of its own, which waits durably in the turn.
 * Refusals are recorded like every proxied call (`meta.refused`).
 *
 * The offered tools come from the registry the exec call runs with — its turn's agent's tools under
 * the policy when the tool activity passes them (`toolset`), else the proxy's own — narrowed by
 * `allowed`: every tool of it a program can call (`proxyOffer`): the read-only built-ins, the
 * agent's own tools (defineTool) and its MCP tools; never the exec tool itself, agent.delegate (a
 * child workflow), a tool that waits for a person's approval, a tool that runs as two activities or
 * on a task queue of its own, nor the built-ins that write the turn's workspace or bookkeeping
 * (react.write, react.patch, react.pull, react.plan, …: the program writes its outputs itself). A
 * custom tool runs with the turn's agent and secrets, as in the tool activity. The offer is
 * recorded once per exec (`stage.exec.tool_offer`).
 */
import net from 'node:net';
import { promises as fs } from 'node:fs';
import { makeBlock } from '../../../core/timeline/block';
import type { AnyToolDeclaration, ToolRegistry } from '../../../core/tools/registry';
import { BUILTIN_TOOLS, reactSearchKnowledge } from '../../../core/tools';
import { patternMatches } from '../../../core/agents/tool-filter';
import type { AgentToolContext, ToolSet } from '../../agents/define-tool';
import type { ToolStore } from '../../../store/tool-store';
import { governanceOf, type CallGovernance } from '../../governance/call-governance';
import { NO_POLICY } from '../../../core/governance/policy';
import { approvalRefusal, type ToolCallRefusalKind } from '../../../core/governance/tool-call';
import type { ToolImpl, ToolObservation } from '../../tools/types';
import { activityLog } from '../../log';

export const PROXY_BLOCK_TYPE = 'stage.exec.tool';
export const PROXY_OFFER_BLOCK_TYPE = 'stage.exec.tool_offer';

const BUILTIN_IDS: ReadonlySet<string> = new Set([...BUILTIN_TOOLS.map((d) => d.id), reactSearchKnowledge.id]);

/** The tools a sandboxed program may call with `registry`, in its order (see the header). */
export function proxyOffer(registry: ToolRegistry, allowed?: readonly string[]): string[] {
  const rules = registry.approvalRules;
  const approved = (id: string) =>
    [...(rules.agentTools ?? []), ...(rules.policyTools ?? [])].some((p) => patternMatches(p, id));
  return registry
    .list()
    .filter((d) => proxyable(d, allowed) && !d.needsApproval && !approved(d.id))
    .map((d) => d.id);
}

/** Whether a program may call the tool at all (approvals and the policy aside). */
function proxyable(d: AnyToolDeclaration, allowed?: readonly string[]): boolean {
  if (allowed && !allowed.includes(d.id)) return false;
  // Tools that cannot run inside an exec's supervisor (a tool with a queue of its own runs on its workers).
  if (d.consumesCode || d.child || d.activity?.then || d.activity?.taskQueue || d.queue) return false;
  // Built-ins: the read-only ones (pull / checkout are explorations that write the workspace).
  if (BUILTIN_IDS.has(d.id)) return d.strategy === 'exploration' && !d.sequential;
  return true; // the agent's own tools and its MCP tools
}
const MAX_REQUEST_BYTES = 256 * 1024;
/** Largest answer sent back into the sandbox. */
const MAX_ANSWER_CHARS = 2_000_000;

export interface SupervisorOptions {
  socketPath: string;
  /** The conversation's store (the exec call's ToolContext.store). */
  store: ToolStore;
  conversationId: string;
  turnId: string;
  /** The exec's tool call id (the proxied calls are recorded under it). */
  callId: string;
  execId: string;
  tools: ReadonlyMap<string, ToolImpl>;
  registry: ToolRegistry;
  /** The exec call's own tools (its agent's registry, implementations and governance); wins over `tools` / `registry`. */
  toolset?: ToolSet;
  /** Narrows the offer further. */
  allowed?: readonly string[];
  /** The exec call's agent and secrets (the tool activity's context): custom tools get them too. */
  agentContext?: Pick<AgentToolContext, 'agent' | 'secrets'>;
  now(): Date;
}

export class ToolSupervisor {
  private server: net.Server | undefined;
  private seq = 0;
  private readonly aborter = new AbortController();
  private readonly inflight = new Set<Promise<void>>();
  private readonly impl: (id: string) => ToolImpl | undefined;
  /** The governance of each call now (the tool activity's; without a toolset, the registry's own rules). */
  private readonly governance: () => Promise<CallGovernance>;
  /** The tool ids a program may call (as the governance stood when the exec started). */
  offered: readonly string[];

  constructor(private readonly opts: SupervisorOptions) {
    const registry = opts.toolset?.registry ?? opts.registry;
    this.impl = opts.toolset ? (id) => opts.toolset!.impl(id) : (id) => opts.tools.get(id);
    const own = governanceOf({ agentName: 'exec', agentTools: registry, governed: registry, policy: NO_POLICY });
    const governance = opts.toolset?.governance;
    this.governance = governance ? () => governance() : () => Promise.resolve(own);
    this.offered = proxyOffer(registry, opts.allowed);
  }

  /** Starts listening (replacing a stale socket left by a crashed worker). */
  async listen(): Promise<void> {
    const o = this.opts;
    const prefix = `${o.callId}.proxy.`;
    this.offered = proxyOffer((await this.governance()).registry, o.allowed);
    // Continue the sequence after calls recorded by an earlier supervisor of the same exec.
    this.seq = (await o.store.blocks()).filter((b) => b.type === PROXY_BLOCK_TYPE && b.id.includes(prefix)).length;
    await o.store.appendBlocks([
      makeBlock({
        type: PROXY_OFFER_BLOCK_TYPE,
        author: 'tool',
        turn_id: o.turnId,
        ts: o.now().toISOString(),
        key: `${o.callId}.offer`,
        call_id: o.callId,
        hidden: true,
        text: this.offered.join('\n'),
        meta: { offered: [...this.offered], exec_id: o.execId, via: 'exec.tool_proxy' },
      }),
    ]);
    await fs.rm(o.socketPath, { force: true });
    const server = net.createServer((socket) => {
      const p = this.serve(socket).finally(() => this.inflight.delete(p));
      this.inflight.add(p);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.socketPath, () => resolve());
    });
    await fs.chmod(o.socketPath, 0o777); // the sandbox user must be able to connect
    this.server = server;
  }

  async close(): Promise<void> {
    this.aborter.abort();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.allSettled([...this.inflight]);
    await fs.rm(this.opts.socketPath, { force: true });
  }

  private async serve(socket: net.Socket): Promise<void> {
    const answer = (body: Record<string, unknown>) =>
      new Promise<void>((resolve) => socket.end(`${JSON.stringify(body)}\n`, () => resolve()));
    let raw: string;
    try {
      raw = await readLine(socket);
    } catch (err) {
      await answer({ ok: false, error: (err as Error).message });
      return;
    }
    let req: { tool_id?: unknown; params?: unknown };
    try {
      req = JSON.parse(raw) as typeof req;
    } catch {
      await answer({ ok: false, error: 'the request is not JSON: {"tool_id": "...", "params": {...}}' });
      return;
    }
    const toolId = typeof req.tool_id === 'string' ? req.tool_id : '';
    const { observation, refused } = await this.decideAndRun(toolId, req.params ?? {});
    const seq = this.seq++;
    await this.record(seq, toolId, req.params, observation, refused);
    const text =
      observation.text.length > MAX_ANSWER_CHARS
        ? `${observation.text.slice(0, MAX_ANSWER_CHARS)}…[truncated]`
        : observation.text;
    await answer({ ok: observation.ok, text });
  }

  /** The governance's decision on one call, then the run of an allowed one. */
  private async decideAndRun(
    toolId: string,
    rawParams: unknown,
  ): Promise<{ observation: ToolObservation; refused?: ToolCallRefusalKind | 'invalid_params' | 'not_offered' }> {
    const governance = await this.governance();
    const verdict = governance.check(toolId, rawParams);
    if ('refused' in verdict)
      return { observation: { ok: false, text: verdict.refused.text }, refused: verdict.refused.kind };
    if (!proxyable(governance.registry.get(toolId), this.opts.allowed))
      return {
        observation: {
          ok: false,
          text: `tool ${JSON.stringify(toolId)} is not allowed from exec (allowed: ${proxyOffer(governance.registry, this.opts.allowed).join(', ')})`,
        },
        refused: 'not_offered',
      };
    if ('invalid' in verdict)
      return { observation: { ok: false, text: verdict.invalid.text }, refused: 'invalid_params' };
    if (verdict.approval)
      return { observation: { ok: false, text: approvalRefusal(toolId, verdict.approval).text }, refused: 'approval' };
    return { observation: await this.run(toolId, verdict.params) };
  }

  private async run(toolId: string, params: Record<string, unknown>): Promise<ToolObservation> {
    const o = this.opts;
    const impl = this.impl(toolId);
    if (!impl) return { ok: false, text: `tool ${toolId} has no implementation in this worker` };
    try {
      let obs = await impl.run(params, {
        store: o.store,
        conversationId: o.conversationId,
        turnId: o.turnId,
        callId: o.callId,
        signal: this.aborter.signal,
        heartbeat: () => undefined,
        now: o.now,
        stream: () => undefined,
        ...(o.agentContext?.agent ? { agent: o.agentContext.agent } : {}),
        ...(o.agentContext?.secrets ? { secrets: o.agentContext.secrets } : {}),
      } as Parameters<ToolImpl['run']>[1]);
      const rows = obs.meta?.source_rows;
      if (Array.isArray(rows) && rows.length > 0) {
        const merged = await o.store.mergeSources(rows, obs.text, o.turnId);
        const { source_rows: _rows, ...meta } = obs.meta ?? {};
        obs = { ...obs, text: merged.text, meta: { ...meta, sources_used: merged.sids } };
      }
      return obs;
    } catch (err) {
      activityLog().warn('exec tool proxy: tool failed', { toolId, execId: o.execId, error: (err as Error).message });
      return { ok: false, text: `tool ${toolId} failed: ${(err as Error).message}` };
    }
  }

  private async record(
    seq: number,
    toolId: string,
    params: unknown,
    obs: ToolObservation,
    refused?: string,
  ): Promise<void> {
    const o = this.opts;
    const key = `${o.callId}.proxy.${seq}`;
    const block = makeBlock({
      type: PROXY_BLOCK_TYPE,
      author: 'tool',
      turn_id: o.turnId,
      ts: o.now().toISOString(),
      key,
      call_id: o.callId,
      mime: obs.mime ?? 'text/plain',
      text: obs.text,
      meta: {
        tool_id: toolId,
        params: params ?? {},
        ok: obs.ok,
        exec_id: o.execId,
        seq,
        via: 'exec.tool_proxy',
        size_bytes: Buffer.byteLength(obs.text),
        // Why the call did not run (the governance's refusal, bad params, not callable from code).
        ...(refused ? { refused } : {}),
        ...(refused === 'policy' ? { policy_denied: true } : {}),
      },
    });
    await o.store.appendBlocks([block]);
  }
}

function readLine(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    socket.setEncoding('utf8');
    socket.setTimeout(30_000, () => reject(new Error('request timed out')));
    socket.on('data', (chunk: string) => {
      buf += chunk;
      if (buf.length > MAX_REQUEST_BYTES) {
        socket.removeAllListeners('data');
        reject(new Error(`request over ${MAX_REQUEST_BYTES} bytes`));
      } else if (buf.includes('\n')) {
        socket.removeAllListeners('data');
        resolve(buf.slice(0, buf.indexOf('\n')));
      }
    });
    socket.on('end', () => resolve(buf));
    socket.on('error', reject);
  });
}
