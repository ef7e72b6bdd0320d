/**
 * The signature schemes a webhook understands, one preset each:
 *
 * - `dreact` (the default): `X-Dreact-Signature: t=<unix seconds>,v1=<hex>` where the hex is
 *   HMAC-SHA256(secret, `<t>.<raw body>`), the delivery id in `X-Dreact-Delivery` (and optionally
 *   the event type in `X-Dreact-Event`).
 * - `github`: `X-Hub-Signature-256: sha256=<hex>` = HMAC-SHA256(secret, raw body), the delivery id
 *   in `X-GitHub-Delivery`, the event in `X-GitHub-Event`. GitHub signs no timestamp, so there is
 *   no replay window: a replay is recognised by its delivery id or its signature only.
 * - `stripe`: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…]` = HMAC-SHA256(secret, `<t>.<raw body>`),
 *   the delivery id is the event's `id` in the (signed) JSON body, the event its `type`.
 *
 * The key of every HMAC is the secret string as UTF-8 bytes (what GitHub and Stripe do). Pure.
 */
import { z } from 'zod';

export const HookPresetSchema = z.enum(['dreact', 'github', 'stripe'], {
  error: 'preset must be one of dreact, github, stripe',
});
export type HookPresetName = z.infer<typeof HookPresetSchema>;

export interface HookPreset {
  name: HookPresetName;
  /** The header carrying the signature (lower case, as HTTP headers compare). */
  signatureHeader: string;
  /** `t=…,v1=…` with the timestamp signed (dreact, stripe), or `sha256=<hex>` over the body alone (github). */
  format: 'timestamped' | 'sha256-body';
  /** Where the delivery id is: a header, or the payload's `id` (stripe). */
  delivery: { header: string } | { payloadField: 'id' };
  /** Where the event type is, if the sender names one. */
  event: { header: string } | { payloadField: 'type' };
  /** The prompt when the hook has no template of its own. */
  defaultTemplate: string;
}

export const HOOK_PRESETS: Readonly<Record<HookPresetName, HookPreset>> = {
  dreact: {
    name: 'dreact',
    signatureHeader: 'x-dreact-signature',
    format: 'timestamped',
    delivery: { header: 'x-dreact-delivery' },
    event: { header: 'x-dreact-event' },
    defaultTemplate: 'A webhook delivery arrived ({{$delivery}}); its JSON payload is attached.',
  },
  github: {
    name: 'github',
    signatureHeader: 'x-hub-signature-256',
    format: 'sha256-body',
    delivery: { header: 'x-github-delivery' },
    event: { header: 'x-github-event' },
    defaultTemplate: 'GitHub {{$event}} event on {{repository.full_name}}; its JSON payload is attached.',
  },
  stripe: {
    name: 'stripe',
    signatureHeader: 'stripe-signature',
    format: 'timestamped',
    delivery: { payloadField: 'id' },
    event: { payloadField: 'type' },
    defaultTemplate: 'Stripe {{type}} event {{id}}; its JSON payload is attached.',
  },
};

/** A delivery id: what senders use (GUIDs, `evt_…`), printable and bounded. */
const DeliveryIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');

export type Headers = (name: string) => string | undefined;

/** The delivery id of a verified delivery, or an error naming where it should have been. */
export function deliveryIdOf(
  preset: HookPreset,
  headers: Headers,
  payload: unknown,
): { id: string } | { error: string } {
  const where =
    'header' in preset.delivery
      ? `the ${preset.delivery.header} header`
      : `the payload's "${preset.delivery.payloadField}"`;
  const raw =
    'header' in preset.delivery
      ? headers(preset.delivery.header)
      : (payload as Record<string, unknown> | null)?.[preset.delivery.payloadField];
  if (raw === undefined) return { error: `missing delivery id: ${where} is required` };
  const parsed = DeliveryIdSchema.safeParse(raw);
  if (!parsed.success) return { error: `${where}: a delivery id is 1–200 printable ASCII characters without spaces` };
  return { id: parsed.data };
}

/** The event type the sender named, if any. */
export function eventOf(preset: HookPreset, headers: Headers, payload: unknown): string | undefined {
  const raw =
    'header' in preset.event
      ? headers(preset.event.header)
      : (payload as Record<string, unknown> | null)?.[preset.event.payloadField];
  return typeof raw === 'string' && raw !== '' ? raw.slice(0, 200) : undefined;
}
