/**
 * Webhook signature verification (the schemes: presets.ts). The HMAC itself comes in as a function
 * (`node:crypto` in the gateway, so this stays pure); the comparison is constant-time over the hex
 * digits; a timestamped scheme refuses a timestamp more than REPLAY_WINDOW_SECONDS away from `now`
 * (either side). A refusal says why — missing header, malformed header, stale timestamp, no
 * matching signature — and never which digits were wrong. Pure.
 */
import type { Headers, HookPreset } from './presets';

/** HMAC-SHA256 of `data` under the UTF-8 bytes of `secret`, as lower-case hex. */
export type HmacSha256Hex = (secret: string, data: string) => string;

/** Deliveries signed longer ago than this (or further in the future) are refused: 5 minutes. */
export const REPLAY_WINDOW_SECONDS = 300;

export type SignatureVerdict =
  | {
      ok: true;
      /** The matching signature as sent (a replay of it is recognised by it: store a digest). */
      signature: string;
      /** The signed timestamp (unix seconds), when the scheme signs one. */
      timestamp?: number;
    }
  | { ok: false; reason: string };

/** Equal hex strings, compared in time that depends on their length only. */
export function hexEqual(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x.length !== y.length) return false;
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x.charCodeAt(i) ^ y.charCodeAt(i);
  return diff === 0;
}

/** `t=…,v1=…,v1=…` (dreact, stripe): the timestamp and every v1 signature. */
export function parseTimestamped(header: string): { t: number; v1: string[] } | undefined {
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^[0-9]{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-fA-F]{64}$/.test(v)) v1.push(v);
  }
  return t !== undefined && v1.length > 0 ? { t, v1 } : undefined;
}

export interface SignedDelivery {
  headers: Headers;
  /** The raw body exactly as received (the signature is over these bytes, decoded as UTF-8). */
  body: string;
}

/** Whether the delivery carries a valid signature under `secret` at time `nowMs`. */
export function verifySignature(
  preset: HookPreset,
  secret: string,
  delivery: SignedDelivery,
  nowMs: number,
  hmac: HmacSha256Hex,
): SignatureVerdict {
  const header = delivery.headers(preset.signatureHeader);
  if (header === undefined || header.trim() === '')
    return { ok: false, reason: `missing signature: the ${preset.signatureHeader} header is required` };
  if (preset.format === 'sha256-body') {
    const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
    if (!m) return { ok: false, reason: `malformed ${preset.signatureHeader}: expected sha256=<64 hex digits>` };
    return hexEqual(hmac(secret, delivery.body), m[1]!)
      ? { ok: true, signature: m[1]!.toLowerCase() }
      : { ok: false, reason: `${preset.signatureHeader} does not match the body under this hook's secret` };
  }
  const parsed = parseTimestamped(header);
  if (!parsed)
    return { ok: false, reason: `malformed ${preset.signatureHeader}: expected t=<unix seconds>,v1=<64 hex digits>` };
  const age = Math.floor(nowMs / 1000) - parsed.t;
  if (Math.abs(age) > REPLAY_WINDOW_SECONDS)
    return {
      ok: false,
      reason: `stale signature: its timestamp is ${Math.abs(age)} s ${age > 0 ? 'old' : 'in the future'} (at most ${REPLAY_WINDOW_SECONDS} s either way)`,
    };
  const expected = hmac(secret, `${parsed.t}.${delivery.body}`);
  let match: string | undefined;
  // Every candidate is compared (no early exit on the first match).
  for (const v of parsed.v1) if (hexEqual(expected, v)) match ??= v.toLowerCase();
  return match
    ? { ok: true, signature: match, timestamp: parsed.t }
    : { ok: false, reason: `${preset.signatureHeader} does not match the body under this hook's secret` };
}

/** The signature header a sender computes (tests, docs, and anything that sends dreact-scheme hooks). */
export function signatureHeaderValue(
  preset: HookPreset,
  secret: string,
  body: string,
  nowMs: number,
  hmac: HmacSha256Hex,
): string {
  if (preset.format === 'sha256-body') return `sha256=${hmac(secret, body)}`;
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${hmac(secret, `${t}.${body}`)}`;
}
