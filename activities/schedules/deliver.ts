/**
 * Delivers a schedule run's answer to the schedule's webhook: a JSON POST signed with the
 * schedule's secret in the scheme an incoming dreact hook verifies (core/hooks/signature.ts, one
 * signer for both: `X-Dreact-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`),
 * the run's workflow id as `X-Dreact-Delivery` and `X-Dreact-Event: schedule.run` — so a schedule
 * can deliver straight to a `/v1/hooks/:id` URL. The URL is checked by web_fetch's guard
 * (activities/net/address-guard.ts: public addresses on 80/443 unless DREACT_FETCH_ALLOW_HOSTS or
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
import { HOOK_PRESETS } from '../../core/hooks/presets';
import { signatureHeaderValue } from '../../core/hooks/signature';
import { hmacSha256Hex } from '../../store/hooks/hook-store';

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
      const body = JSON.stringify({ ...input.payload, answer });
      const dreactScheme = HOOK_PRESETS.dreact;
      const res = await pinnedGet(guarded.target, {
        signal: ctx.cancellationSignal,
        post: Buffer.from(body),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'durable-react-schedules',
          [dreactScheme.signatureHeader]: signatureHeaderValue(dreactScheme, secret, body, Date.now(), hmacSha256Hex),
          'x-dreact-delivery': runWorkflowId,
          'x-dreact-event': 'schedule.run',
        },
      });
      await res.body?.cancel();
      if (res.status >= 500) throw ApplicationFailure.retryable(`webhook answered ${res.status}`, 'WebhookStatus');
      return done(`delivered: ${res.status}`);
    },
  };
}

export type DeliveryActivities = ReturnType<typeof makeDeliveryActivities>;
