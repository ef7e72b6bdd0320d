/**
 * Images and documents in a request, fitted to what the model can take (`ModelAbilities.images`,
 * `.documents`): a part the model cannot see becomes a text note saying what is there and how to
 * get at it otherwise, so the model is never sent what it would refuse and never left guessing.
 * Pure; used by the round pipeline after render.
 */
import type { ModelAbilities } from './abilities';
import type { ContentPart, ModelMessage } from './provider';

/** Text documents go to every model (they are text); only PDFs need the ability. */
const needs = (p: ContentPart): 'images' | 'documents' | undefined =>
  p.type === 'image' ? 'images' : p.type === 'document' && !p.mime.startsWith('text/') ? 'documents' : undefined;

export function mediaNote(p: Extract<ContentPart, { type: 'image' | 'document' }>): string {
  const bytes = Math.floor((p.base64.length * 3) / 4);
  return p.type === 'image'
    ? `[an ${p.mime} image (${bytes} bytes) is attached here, but this model cannot see images; describe what you need from it or use a tool that reads it]`
    : `[a ${p.mime} document (${bytes} bytes) is attached here, but this model cannot read ${p.mime} documents; read its extracted text with react.read, or ask for it in another form]`;
}

export function fitMedia(
  messages: readonly ModelMessage[],
  abilities: Pick<ModelAbilities, 'images' | 'documents'>,
): ModelMessage[] {
  let changed = false;
  const out = messages.map((m) => {
    if (!m.content.some((p) => needs(p) !== undefined && !abilities[needs(p)!])) return m;
    changed = true;
    return {
      ...m,
      content: m.content.map((p): ContentPart => {
        const need = needs(p);
        if (need === undefined || abilities[need] || (p.type !== 'image' && p.type !== 'document')) return p;
        return { type: 'text', text: mediaNote(p), ...(p.cache ? { cache: true } : {}) };
      }),
    };
  });
  return changed ? out : [...messages];
}
