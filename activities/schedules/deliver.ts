/**
 * Delivers a schedule run's answer to the schedule's webhook: a JSON POST signed with the
 * schedule's secret — `X-Dreact-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` and
 * `X-Dreact-Timestamp: <unix seconds>` — to a URL checked by web_fetch's guard (activities/net/
 * address-guard.ts: public addresses on 80/443 unless DREACT_FETCH_ALLOW_HOSTS or
 * DREACT_WEB_ALLOW_PRIVATE=1 say otherwise) and connected to the checked addresses only. A refused
 * URL is recorded and not retried; a receiver's 5xx or a network error is retried by the activity.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { Pool } from 'pg';
import { fetchAllowListFromEnv, guardUrl } from '../net/address-guard';
import { pinnedGet } from '../net/pinned-get';
import { loadSchedule } from '../../store/schedules/schedule-store';
import { recordRunDelivery } from '../../store/schedules/run-store';
import { dreact, runWorkflowIdOf } from './run-activities';
import { signWebhook, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './signature';

export interface DeliveryInput {
  scheduleId: string;
  url: string;
  /** The run's ids and outcome (`conversationId`, `turnIndex`, …); the answer is read here from the ended turn, not carried through history. */
  payload: Record<string, unknown> & { conversationId: string; turnIndex: number };
}

/** The ended turn's answer ('' when the turn failed). */
async function answerOf(conversationId: string, turnIndex: number): Promise<string> {
  try {
    return (await dreact().result(conversationId, turnIndex)).answer;
  } catch (err) {
    if (err instanceof WorkflowFailedError) return '';
    throw err;
  }
}

export function makeDeliveryActivities(pool: Pool) {
  return {
    async deliverScheduledAnswer(input: DeliveryInput): Promise<string> {
      const ctx = Context.current();
      const runWorkflowId = runWorkflowIdOf();
      const secret = (await loadSchedule(pool, input.scheduleId))?.webhookSecret;
      const done = async (what: string) => {
        await recordRunDelivery(pool, runWorkflowId, what);
        return what;
      };
      if (!secret) return done('refused: the schedule has no webhook secret');
      const guarded = await guardUrl(new URL(input.url), {
        allowList: fetchAllowListFromEnv(),
        allowPrivateNetwork: process.env.DREACT_WEB_ALLOW_PRIVATE === '1',
      });
      if (!guarded.ok) return done(`refused: ${guarded.reason}`);
      const answer = await answerOf(input.payload.conversationId, input.payload.turnIndex);
      const body = Buffer.from(JSON.stringify({ ...input.payload, answer }));
      const timestamp = Math.floor(Date.now() / 1000);
      const res = await pinnedGet(guarded.target, {
        signal: ctx.cancellationSignal,
        post: body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'durable-react-schedules',
          [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
          [WEBHOOK_SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
          'x-dreact-delivery': runWorkflowId,
        },
      });
      await res.body?.cancel();
      if (res.status >= 500) throw ApplicationFailure.retryable(`webhook answered ${res.status}`, 'WebhookStatus');
      return done(`delivered: ${res.status}`);
    },
  };
}

export type DeliveryActivities = ReturnType<typeof makeDeliveryActivities>;
