/**
 * The signature of a schedule's webhook delivery (activities/schedules/deliver.ts): HMAC-SHA256
 * over `<unix seconds>.<body>` with the schedule's secret, hex, as `sha256=<hex>` in
 * `X-Dreact-Signature`; the seconds in `X-Dreact-Timestamp`. A receiver recomputes it and compares
 * in constant time (`verifyWebhook`), refusing a timestamp outside its window.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SIGNATURE_HEADER = 'x-dreact-signature';
export const WEBHOOK_TIMESTAMP_HEADER = 'x-dreact-timestamp';

export function signWebhook(secret: string, timestamp: number, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/** Whether `signature` is the one of `body` at `timestamp` (and the timestamp within `windowSeconds` of `nowSeconds`). */
export function verifyWebhook(
  secret: string,
  timestamp: number,
  body: Buffer | string,
  signature: string,
  nowSeconds = Math.floor(Date.now() / 1000),
  windowSeconds = 300,
): boolean {
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > windowSeconds) return false;
  const want = Buffer.from(signWebhook(secret, timestamp, body));
  const got = Buffer.from(signature);
  return want.length === got.length && timingSafeEqual(want, got);
}
