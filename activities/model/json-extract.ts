/**
 * Finds a JSON value in free-form model text: the whole text, a ```json fenced block, or the first
 * balanced {...} / [...] span that parses. Returns undefined when nothing parses.
 */

function tryParse(s: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(s) };
  } catch {
    return { ok: false };
  }
}

/** Index just past the balanced span starting at `start` (an opening bracket), or -1. */
function balancedEnd(text: string, start: number): number {
  const open = text[start];
  const close = open === '{' ? '}' : ']';
  const stack: string[] = [close];
  let inString = false;
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') stack.push('}');
    else if (c === '[') stack.push(']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
}

export function extractJson(text: string): { value: unknown } | undefined {
  const trimmed = text.trim();
  const whole = tryParse(trimmed);
  if (whole.ok) return { value: whole.value };
  for (const m of trimmed.matchAll(/```(?:json|JSON)?\s*\n?([\s\S]*?)```/g)) {
    const r = tryParse(m[1]!.trim());
    if (r.ok) return { value: r.value };
  }
  for (let i = 0; i < trimmed.length; i++) {
    const c = trimmed[i];
    if (c !== '{' && c !== '[') continue;
    const end = balancedEnd(trimmed, i);
    if (end < 0) continue;
    const r = tryParse(trimmed.slice(i, end));
    if (r.ok) return { value: r.value };
  }
  return undefined;
}
