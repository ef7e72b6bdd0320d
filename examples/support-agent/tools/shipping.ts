/** support.shipping_status: a shipment's status from the carrier's HTTP API (URL and token are agent secrets). */
import { z } from 'zod';
import { defineTool } from 'durable-react/tools';

export const shippingStatus = defineTool({
  id: 'support.shipping_status',
  description: "Where a shipment is: the carrier's status and expected delivery date, by tracking number.",
  params: z.object({ tracking: z.string().regex(/^[A-Z0-9]{6,24}$/, 'a tracking number: A-Z and 0-9') }),
  strategy: 'exploration', // reads only: may run beside other reads
  timeoutMs: 10_000,
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['ShippingAuthError'] },
  summary: ({ tracking }) => `shipping status ${tracking}`,
  run: async ({ tracking }, ctx) => {
    const res = await fetch(`${ctx.secret('SHIPPING_API_URL')}/shipments/${tracking}`, {
      headers: { authorization: `Bearer ${ctx.secret('SHIPPING_API_TOKEN')}` },
      signal: ctx.signal,
    });
    if (res.status === 404) return { ok: false, text: `no shipment with tracking number ${tracking}` }; // an observation
    if (res.status === 401 || res.status === 403) {
      const err = new Error(`the shipping API refused the token (${res.status})`);
      err.name = 'ShippingAuthError'; // never retried
      throw err;
    }
    if (!res.ok) throw new Error(`shipping API ${res.status}`); // retried by Temporal
    const body = (await res.json()) as { status: string; eta?: string };
    ctx.log.info('shipment looked up', { tracking });
    return `${tracking}: ${body.status}${body.eta ? `, expected ${body.eta}` : ''}`;
  },
});
