/**
 * A turn's TurnRef from its input — zod-free, so the turn workflow builds it (once per turn) at no
 * schema cost. The one mapping from what the client sent to the overrides activities resolve:
 * `maxIterations` (the old name, in inputs and conversation state recorded before the rename) is
 * read as `maxRounds`; an empty model override is none.
 */
import type { AgentRef } from '../agents/ref';
import type { RecordedTurnOptions } from './contracts';
import type { TurnRef } from './ref';

export function turnRefOf(
  input: { conversationId: string; turnId: string; turnIndex: number; options: RecordedTurnOptions },
  agent?: AgentRef,
): TurnRef {
  const { model, maxRounds, maxIterations, contextMaxTokens } = input.options;
  const rounds = maxRounds ?? maxIterations;
  const overrides: NonNullable<TurnRef['overrides']> = {
    ...(model && Object.keys(model).length > 0 ? { model } : {}),
    ...(rounds !== undefined ? { maxRounds: rounds } : {}),
    ...(contextMaxTokens !== undefined ? { contextMaxTokens } : {}),
  };
  return {
    conversationId: input.conversationId,
    turnId: input.turnId,
    turnIndex: input.turnIndex,
    ...(agent ? { agent } : {}),
    ...(Object.keys(overrides).length > 0 ? { overrides } : {}),
  };
}
