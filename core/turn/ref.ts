/**
 * The one per-turn shape in activity inputs: `TurnRef` — the turn's ids, the agent version it
 * runs on and the overrides its client sent (model, round budget, context budget). Activities
 * resolve the turn's agent view and effective settings from it in one place
 * (`deps.agents.forTurn(ref)`, activities/agents/view.ts), memoised by agent version and overrides;
 * nothing resolved travels through history.
 *
 * The schema validates a ref where one arrives (the activities' port); workflows import the types
 * only (`import type`), and build refs with the zod-free `turnRefOf` (./turn-ref-of.ts).
 */
import { z } from 'zod';
import type { AgentRef } from '../agents/ref';
import { TurnOptionsSchema } from './contracts';

export const AgentRefSchema = z.strictObject({
  name: z.string().min(1).max(64),
  hash: z.string().regex(/^[0-9a-f]{8,64}$/, 'an agent hash is lowercase hex'),
  depth: z.number().int().nonnegative().optional(),
  depthCap: z.number().int().nonnegative().optional(),
}) satisfies z.ZodType<AgentRef>;

export const TurnRefSchema = z.strictObject({
  conversationId: z.string().min(1).max(500),
  turnId: z.string().min(1).max(200),
  turnIndex: z.number().int().positive(),
  /** The agent version (absent before loadContext resolved it, and in turns recorded before agents: the default agent). */
  agent: AgentRefSchema.optional(),
  /** What the turn's client asked for on top of its agent (TurnOptions; the old name `maxIterations` is read as `maxRounds`). */
  overrides: TurnOptionsSchema.optional(),
});
export type TurnRef = z.output<typeof TurnRefSchema>;

/** `raw` as a TurnRef, or an Error naming the field that is wrong (`where`: the input it came in). */
export function parseTurnRef(raw: unknown, where = 'turn'): TurnRef {
  const parsed = TurnRefSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = [where, ...issue.path.map(String)].join('.');
  throw new Error(`${path}: ${issue.message}`);
}
