/**
 * What a gateway client may choose for a turn: an explicit allow-list, not the worker's whole
 * TurnOptions. Unknown keys (also inside `model`) are a 400 naming their path; budgets are bounded
 * below what the CLI may ask; the provider and model id only among what the deployment allows.
 * The scripted test model (and an inline `script`, which writes the model's decisions and so
 * drives every tool directly) is refused with 403 unless the operator sets DREACT_ALLOW_SCRIPTED=1.
 * A turn that names no model gets the deployment's default, which the worker resolves.
 */
import { z } from 'zod';
import { type TurnOptionsInput } from '../../core/turn/contracts';
import { ModelConfigSchema } from '../../core/model/config';
import { Forbidden } from './http';

/** The largest context budget a client may ask for (the worker's default is DREACT_CONTEXT_MAX_TOKENS). */
export const MAX_CLIENT_CONTEXT_TOKENS = 200_000;
/** The largest round budget a client may ask for. */
export const MAX_CLIENT_ROUNDS = 50;
/** The largest output budget per model call a client may ask for. */
export const MAX_CLIENT_OUTPUT_TOKENS = 32_000;

export const ClientModelSchema = z.strictObject({
  /** Any provider the runtime has; the worker answers one it lacks credentials for with a clear error. */
  provider: ModelConfigSchema.shape.provider,
  /** A model id among the deployment's (DREACT_GATEWAY_MODELS). */
  model: z.string().min(1).max(100).optional(),
  maxTokens: z.number().int().positive().max(MAX_CLIENT_OUTPUT_TOKENS).optional(),
  temperature: z.number().min(0).max(1).optional(),
  protocol: z.enum(['channels', 'native']).optional(),
  answerSynthesis: z.boolean().optional(),
  /** Scripted provider only, and only with DREACT_ALLOW_SCRIPTED=1. */
  script: ModelConfigSchema.shape.script,
});

export const ClientTurnOptionsSchema = z.strictObject(
  {
    model: ClientModelSchema.optional(),
    maxRounds: z.number().int().positive().max(MAX_CLIENT_ROUNDS).optional(),
    /** The older name of `maxRounds` (read when `maxRounds` is absent). */
    maxIterations: z.number().int().positive().max(MAX_CLIENT_ROUNDS).optional(),
    contextMaxTokens: z.number().int().min(1_000).max(MAX_CLIENT_CONTEXT_TOKENS).optional(),
  },
  { error: 'options must be an object' },
);
export type ClientTurnOptions = z.output<typeof ClientTurnOptionsSchema>;

export interface ModelPolicy {
  /** DREACT_ALLOW_SCRIPTED=1: clients may choose the scripted test model and inline scripts. */
  allowScripted: boolean;
  /** DREACT_GATEWAY_MODELS: the model ids a client may name (none: only the deployment's default). */
  models: readonly string[];
}

/** The options a client sent (parsed by ClientTurnOptionsSchema), checked against the deployment's model policy. */
export function clientTurnOptions(options: ClientTurnOptions | undefined, policy: ModelPolicy): TurnOptionsInput {
  if (options === undefined) return {};
  const model = options.model;
  if ((model?.provider === 'scripted' || model?.script !== undefined) && !policy.allowScripted)
    throw new Forbidden(
      'options.model: the scripted test model is disabled on this gateway (the operator enables it for tests with DREACT_ALLOW_SCRIPTED=1)',
    );
  if (model?.model !== undefined && !policy.models.includes(model.model))
    throw new Forbidden(
      `options.model.model: "${model.model}" is not offered here (${
        policy.models.length ? `offered: ${policy.models.join(', ')}` : 'only the default model'
      }; the operator lists models in DREACT_GATEWAY_MODELS)`,
    );
  return options;
}
