/**
 * A webhook's prompt template: text with `{{field.path}}` placeholders filled from the delivery's
 * JSON payload — `{{action}} on {{repository.full_name}}: {{issue.title}}`. A path is names (and
 * array indexes) joined by dots, looked up as the payload's own properties only; nothing is ever
 * evaluated (no expressions, helpers or code). A value that is missing (or null) renders empty and
 * is listed in `missing`; a string renders as it is, a number or boolean as its text, an object or
 * array as compact JSON — each capped at MAX_VALUE_CHARS. Two context fields come from the
 * delivery rather than the payload: `$delivery` (its id) and `$event` (its event type, when the
 * sender names one). A template with a broken placeholder is refused with the position. Pure.
 */

/** The longest template accepted. */
export const MAX_TEMPLATE_CHARS = 4_000;
/** The most characters one placeholder renders (then `…`). */
export const MAX_VALUE_CHARS = 4_000;

const PATH = /^\$?[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

export class HookTemplateError extends Error {
  override name = 'HookTemplateError';
}

export interface TemplateContext {
  payload: unknown;
  delivery: string;
  event?: string | undefined;
}

export interface RenderedTemplate {
  text: string;
  /** The placeholders with no value in this payload, in template order, each once. */
  missing: string[];
}

/** The placeholder paths of a template; a HookTemplateError names the first broken one. */
export function templateFields(template: string): string[] {
  if (template.length > MAX_TEMPLATE_CHARS)
    throw new HookTemplateError(`prompt template: ${template.length} characters, at most ${MAX_TEMPLATE_CHARS}`);
  const fields: string[] = [];
  let rest = '';
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    rest += template.slice(last, m.index);
    last = m.index + m[0].length;
    const path = m[1]!;
    if (!PATH.test(path))
      throw new HookTemplateError(
        `prompt template: {{${path}}} at character ${m.index + 1} is not a field path (names or indexes joined by dots, e.g. {{issue.title}} or {{commits.0.id}})`,
      );
    fields.push(path);
  }
  rest += template.slice(last);
  const stray = /\{\{|\}\}/.exec(rest);
  if (stray)
    throw new HookTemplateError(
      `prompt template: an unmatched "${stray[0]}" (placeholders are {{field.path}}, each closed on its own)`,
    );
  return fields;
}

function lookup(ctx: TemplateContext, path: string): unknown {
  if (path === '$delivery') return ctx.delivery;
  if (path === '$event') return ctx.event;
  if (path.startsWith('$')) return undefined;
  let value: unknown = ctx.payload;
  for (const name of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, name)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

/** The template filled from the context (the template was checked by templateFields when stored). */
export function renderTemplate(template: string, ctx: TemplateContext): RenderedTemplate {
  templateFields(template);
  const missing: string[] = [];
  const text = template.replace(PLACEHOLDER, (_all, path: string) => {
    const value = lookup(ctx, path);
    if (value === undefined || value === null) {
      if (!missing.includes(path)) missing.push(path);
      return '';
    }
    return show(value);
  });
  return { text, missing };
}

/** The prompt of a delivery: the rendering, and a last line naming the fields it lacked. */
export function deliveryPrompt(rendered: RenderedTemplate): string {
  if (rendered.missing.length === 0) return rendered.text;
  const list = rendered.missing.map((m) => `{{${m}}}`).join(', ');
  return `${rendered.text}\n\n(Not in this payload, rendered empty: ${list}.)`;
}
