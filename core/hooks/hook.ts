/**
 * A webhook that starts turns (issue 44, item 3): what a client sends to create one and what it is
 * shown of one. The secret is never part of a view: it is shown once, when created or rotated.
 * Pure.
 */
import { z } from 'zod';
import { ClientConversationIdSchema } from '../tenancy/conversation-space';
import { HookPresetSchema } from './presets';
import { HookTemplateError, templateFields } from './template';

export const HookIdSchema = z.string().regex(/^hk_[0-9a-f]{24}$/, 'a hook id is hk_ and 24 hex digits');

/** A secret a client brings (Stripe's endpoint secret `whsec_…`, or one of its own). */
export const HookSecretSchema = z
  .string()
  .min(16, 'secret: at least 16 characters')
  .max(256, 'secret: at most 256 characters')
  .regex(/^[\x21-\x7e]+$/, 'secret: printable ASCII without spaces');

export const NewHookSchema = z.strictObject({
  /** The agent every delivery's turn runs. */
  agent: z.string({ error: 'agent is required (an agent name)' }).min(1).max(100),
  /** One conversation every delivery continues; absent: a new conversation per delivery. */
  conversation: ClientConversationIdSchema.optional(),
  /** `{{field.path}}` placeholders over the payload (core/hooks/template.ts); absent: the preset's. */
  promptTemplate: z
    .string()
    .optional()
    .superRefine((t, ctx) => {
      if (t === undefined) return;
      try {
        templateFields(t);
      } catch (err) {
        if (!(err instanceof HookTemplateError)) throw err;
        ctx.addIssue({ code: 'custom', message: err.message.replace(/^prompt template: /, '') });
      }
    }),
  preset: HookPresetSchema.default('dreact'),
  /** Absent: a new random secret (returned once). */
  secret: HookSecretSchema.optional(),
});
export type NewHook = z.output<typeof NewHookSchema>;

export const RotateHookSchema = z.strictObject({ secret: HookSecretSchema.optional() });

export interface HookView {
  id: string;
  agent: string;
  /** The conversation every delivery continues, as its owner names it; null: one per delivery. */
  conversation: string | null;
  promptTemplate: string | null;
  preset: z.infer<typeof HookPresetSchema>;
  userId: string | null;
  createdAt: string;
  rotatedAt: string | null;
  deliveries: number;
}

/** The client id of a delivery's own conversation: derived from hook and delivery, so a retry finds it. */
export function deliveryConversationId(hookId: string, deliveryDigest: string): string {
  return `${hookId}-${deliveryDigest.slice(0, 20)}`;
}
