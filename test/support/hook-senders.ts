/**
 * What a webhook sender does, for the webhook tests: HMAC-SHA256 in hex, the default scheme's
 * headers (`X-Dreact-Signature: t=…,v1=…` over `<t>.<body>`, `X-Dreact-Delivery`), and a POST of
 * the body byte for byte with its JSON answer. GitHub's and Stripe's headers are computed in the
 * tests themselves, as each documents them.
 */
import { createHmac } from 'node:crypto';

export const hmac = (secret: string, data: string) => createHmac('sha256', secret).update(data).digest('hex');
export const unix = (ms = Date.now()) => Math.floor(ms / 1000);

export const dreactHeaders = (secret: string, body: string, delivery: string, at = Date.now()) => ({
  'x-dreact-signature': `t=${unix(at)},v1=${hmac(secret, `${unix(at)}.${body}`)}`,
  'x-dreact-delivery': delivery,
});

/** A JSON answer: its fields, or the error. */
export type Answer = Record<string, unknown> & { error: { code: string; message: string } };

/** POSTs a delivery (the body as given, byte for byte). */
export async function deliver(url: string, body: string, headers: Record<string, string>) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer };
}
