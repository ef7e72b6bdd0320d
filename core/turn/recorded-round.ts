/**
 * A decide round's input as a history recorded it, in either shape: today's (`turn`: a TurnRef)
 * or the one recorded before TurnRef, whose ids, agent ref, model override and context budget sat
 * at the top level. Readers of old histories (`dreact inspect`) take both; activities take only
 * today's — a pinned turn's rounds run on the build that started it (docs/CONVENTIONS.md).
 */
import type { AgentRef } from '../agents/ref';
import type { DecideInput } from './activity-contracts';
import type { ModelConfig } from '../model/config';
import { turnRefOf } from './turn-ref-of';

/** The top-level fields of a decide input recorded before TurnRef. */
interface RecordedBeforeTurnRef extends Omit<DecideInput, 'turn'> {
  conversationId: string;
  turnId: string;
  turnIndex: number;
  model?: ModelConfig;
  contextMaxTokens?: number;
  agent?: AgentRef;
}

export function recordedDecideInput(recorded: DecideInput | RecordedBeforeTurnRef): DecideInput {
  if ('turn' in recorded && recorded.turn) return recorded;
  const { conversationId, turnId, turnIndex, model, contextMaxTokens, agent, ...round } =
    recorded as RecordedBeforeTurnRef;
  const options = { ...(model ? { model } : {}), ...(contextMaxTokens !== undefined ? { contextMaxTokens } : {}) };
  return { ...round, turn: turnRefOf({ conversationId, turnId, turnIndex, options }, agent) };
}
