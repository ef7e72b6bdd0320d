/**
 * A 30-turn conversation spread over 30 days for react.memsearch tests: a trip, a billing bug with
 * a file name and an error string, baking, deployments, a report with an attachment, a login
 * incident (paraphrase target), agent notes, and filler turns.
 */
import { makeBlock, type Block } from '../../core/timeline/block';
import { paths } from '../../core/timeline/paths';

export const NOW = new Date('2026-03-31T12:00:00.000Z');
const DAY = 86_400_000;
/** Turn i happened (30 − i) days before NOW, two hours earlier in the day: turn 29 yesterday, turn 30 today. */
export const tsOf = (i: number) => new Date(NOW.getTime() - (30 - i) * DAY - 2 * 3_600_000).toISOString();

const TOPICS: Record<number, { prompt: string; answer: string }> = {
  1: { prompt: 'Hello! Let us plan a trip to Lisbon in May.', answer: 'Gladly: Lisbon in May is mild and sunny.' },
  3: {
    prompt: "billing_export.py crashes with KeyError: 'invoice_id' when the CSV has no header row",
    answer: 'The reader assumes a header; pass fieldnames explicitly in billing_export.py.',
  },
  5: {
    prompt: 'Which sourdough hydration should I start with?',
    answer: 'Start around 70 percent hydration with a stiff levain and a long cold retard.',
  },
  7: {
    prompt: 'Compare a blue-green deployment with a canary release for our API.',
    answer: 'A blue-green deployment switches all traffic at once; a canary shifts it gradually.',
  },
  9: { prompt: 'Here is the quarterly report.', answer: 'Revenue grew in every region.' },
  12: {
    prompt: 'Users report the login page froze after entering the password.',
    answer: 'The session endpoint timed out; raising the pool size fixed it.',
  },
  15: { prompt: 'Pick a name for the analytics service.', answer: 'Call it Heron.' },
  24: { prompt: 'Tune the Kafka consumer lag alerts.', answer: 'Alert when lag exceeds five minutes of traffic.' },
  29: {
    prompt: 'Draft the database migration checklist for Thursday.',
    answer: 'Checklist: backup, dry run on staging, lock writes, migrate, verify, unlock.',
  },
  30: { prompt: 'Summarise where we are.', answer: 'We are on track.' },
};
const FILLER = [
  'gardening tomatoes on a balcony',
  'a reading list on medieval history',
  'choosing running shoes for trails',
  'learning the cello as an adult',
  'a birthday party menu for ten',
  'houseplants that survive low light',
];
const topic = (i: number) =>
  TOPICS[i] ?? {
    prompt: `Tell me about ${FILLER[i % FILLER.length]} (part ${i}).`,
    answer: `Some thoughts on ${FILLER[i % FILLER.length]}, part ${i}.`,
  };

export function turnBlocks(i: number): Block[] {
  const turnId = `turn_${i}`;
  const ts = tsOf(i);
  const t = topic(i);
  const blocks: Block[] = [
    makeBlock({ type: 'turn.header', author: 'system', turn_id: turnId, ts, key: 'header', text: '' }),
    makeBlock({
      type: 'user.prompt',
      author: 'user',
      turn_id: turnId,
      ts,
      path: paths.userPrompt(turnId),
      text: t.prompt,
    }),
    makeBlock({
      type: 'assistant.completion',
      author: 'assistant',
      turn_id: turnId,
      ts,
      path: paths.completion(turnId),
      text: t.answer,
    }),
  ];
  if (i === 9)
    blocks.push(
      makeBlock({
        type: 'user.attachment',
        author: 'user',
        turn_id: turnId,
        ts,
        path: `fi:${turnId}.user.attachments/q3-report.pdf`,
        text: '',
        meta: { attachment: 'q3-report.pdf', text: 'Quarterly revenue table: EMEA 4.1M, APAC 3.2M, Americas 6.0M.' },
      }),
    );
  if (i === 15)
    blocks.push(
      makeBlock({
        type: 'react.notes',
        author: 'react',
        turn_id: turnId,
        ts,
        path: `ar:${turnId}.react.notes.tc_000000000015`,
        text: '[D] the analytics service is named Heron; owner is the data platform team',
      }),
    );
  return blocks;
}
