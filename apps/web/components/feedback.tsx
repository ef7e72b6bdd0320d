/**
 * A finished turn's feedback: good (👍) / bad (👎) / neutral (toggle buttons, the current rating pressed),
 * Clear, and an optional comment sent with the rating (POST …/feedback).
 */
import { useState } from 'preact/hooks';
import type { Rating } from '../api';

/** Icons as inline SVG (stroke paths after Feather, MIT): no emoji font needed. */
const ICONS: Record<Rating, preact.JSX.Element> = {
  ok: (
    <path d="M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.28a2 2 0 0 0 2-1.7l1.38-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3" />
  ),
  not_ok: (
    <path d="M10 15v4a3 3 0 0 0 3 3l4-9V2H5.72a2 2 0 0 0-2 1.7l-1.38 9a2 2 0 0 0 2 2.3zm7-13h2.67A2.31 2.31 0 0 1 22 4v7a2.31 2.31 0 0 1-2.33 2H17" />
  ),
  neutral: (
    <>
      <circle cx="12" cy="12" r="10" />
      <path d="M8 15h8M9 9h.01M15 9h.01" />
    </>
  ),
};

const CHOICES: Array<{ rating: Rating; label: string }> = [
  { rating: 'ok', label: 'Good answer' },
  { rating: 'not_ok', label: 'Bad answer' },
  { rating: 'neutral', label: 'Neutral' },
];

export function Feedback({
  current,
  saved = false,
  onRate,
}: {
  current: { rating: Rating | null; text: string | null } | undefined;
  /** The last rating or comment was stored: a "Saved" status confirms it. */
  saved?: boolean;
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
          <svg
            aria-hidden="true"
            viewBox="0 0 24 24"
            width="18"
            height="18"
            fill="none"
            stroke="currentColor"
            stroke-width="2"
            stroke-linecap="round"
            stroke-linejoin="round"
          >
            {ICONS[c.rating]}
          </svg>
        </button>
      ))}
      {rating && (
        <button type="button" class="text-button" disabled={saving} onClick={() => void rate(null)}>
          Clear
        </button>
      )}
      {/* A live region from the start (announced when its text comes); the same markup live and reloaded. */}
      <span class="saved" role="status">
        {saved && !saving ? 'Feedback saved' : ''}
      </span>
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
