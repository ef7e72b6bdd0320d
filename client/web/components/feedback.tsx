/**
 * A finished turn's feedback: 👍 / 👎 / neutral (toggle buttons, the current rating pressed),
 * Clear, and an optional comment sent with the rating (POST …/feedback).
 */
import { useState } from 'preact/hooks';
import type { Rating } from '../api';

const CHOICES: Array<{ rating: Rating; icon: string; label: string }> = [
  { rating: 'ok', icon: '👍', label: 'Good answer' },
  { rating: 'not_ok', icon: '👎', label: 'Bad answer' },
  { rating: 'neutral', icon: '😐', label: 'Neutral' },
];

export function Feedback({
  current,
  onRate,
}: {
  current: { rating: Rating | null; text: string | null } | undefined;
  onRate: (rating: Rating | null, text?: string) => Promise<void>;
}) {
  const [comment, setComment] = useState(current?.text ?? '');
  const [saving, setSaving] = useState(false);
  const rating = current?.rating ?? null;
  const rate = async (r: Rating | null) => {
    setSaving(true);
    try {
      await onRate(r, r && comment.trim() ? comment.trim() : undefined);
    } finally {
      setSaving(false);
    }
  };
  return (
    <div class="feedback" role="group" aria-label="feedback on this answer">
      {CHOICES.map((c) => (
        <button
          key={c.rating}
          type="button"
          class="icon-button"
          aria-label={c.label}
          title={c.label}
          aria-pressed={rating === c.rating}
          disabled={saving}
          onClick={() => void rate(rating === c.rating ? null : c.rating)}
        >
          <span aria-hidden="true">{c.icon}</span>
        </button>
      ))}
      {rating && (
        <button type="button" class="text-button" disabled={saving} onClick={() => void rate(null)}>
          Clear
        </button>
      )}
      <details class="comment">
        <summary>Comment</summary>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void rate(rating ?? 'neutral');
          }}
        >
          <textarea
            aria-label="feedback comment"
            rows={2}
            value={comment}
            onInput={(e) => setComment(e.currentTarget.value)}
          />
          <button type="submit" disabled={saving}>
            Save
          </button>
        </form>
      </details>
    </div>
  );
}
