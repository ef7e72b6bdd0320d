/**
 * Copy to the clipboard: a button that says "Copied" once the text is there (an answer's whole
 * text; markdown.tsx adds the same to each code block). Falls back to a selected textarea where
 * the Clipboard API is refused (a page not served from a secure origin).
 */
import { useState } from 'preact/hooks';

export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    if (!ok) throw new Error('the browser refused to copy');
  }
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <button
      type="button"
      class="text-button copy"
      aria-label={label}
      onClick={() =>
        void copyText(text).then(
          () => setState('copied'),
          () => setState('failed'),
        )
      }
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy'}
    </button>
  );
}
