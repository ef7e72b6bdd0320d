/**
 * A turn request's body: JSON `{prompt, options?, messageId?, agent?}`, or multipart/form-data
 * with the same fields (options as a JSON string) and the attachments as `files` parts. Bad input
 * is a `bad_input` DreactError (400) before anything is written.
 */
import type { Context } from 'hono';
import { z } from 'zod';
import { DreactError } from '../../client/api';
import type { AttachmentUpload } from '../../client/attachments/preflight';
import { ClientTurnOptionsSchema } from './turn-options';
import { jsonBody, zodMessage } from './http';

export const TurnBodySchema = z.strictObject({
  prompt: z.string({ error: 'prompt is required (a string)' }),
  // What a client may choose, and nothing else (turn-options.ts).
  options: ClientTurnOptionsSchema.optional(),
  messageId: z.string().optional(),
  /** The conversation's agent by name (GET /v1/agents); absent: the conversation's, else default. */
  agent: z.string().optional(),
});

/**
 * A turn request: JSON `{prompt, options?, messageId?}`, or multipart/form-data with the same
 * fields (options as a JSON string) and the attachments as `files` parts.
 */
export async function turnRequest(
  c: Context,
): Promise<{ body: z.output<typeof TurnBodySchema>; uploads: AttachmentUpload[] }> {
  if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('multipart/form-data'))
    return { body: await jsonBody(c, TurnBodySchema), uploads: [] };
  let form: Record<string, string | File | Array<string | File>>;
  try {
    form = await c.req.parseBody({ all: true });
  } catch (err) {
    throw new DreactError(`unreadable multipart body: ${(err as Error).message}`, 'bad_input');
  }
  const uploads: AttachmentUpload[] = [];
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(form)) {
    const values = Array.isArray(value) ? value : [value];
    if (name === 'files') {
      for (const v of values) {
        if (typeof v === 'string') throw new DreactError('files: each part must be a file upload', 'bad_input');
        uploads.push({ name: v.name, bytes: Buffer.from(await v.arrayBuffer()) });
      }
      continue;
    }
    if (values.length !== 1 || typeof values[0] !== 'string')
      throw new DreactError(`${name}: expected one text field`, 'bad_input');
    fields[name] = values[0];
  }
  if (typeof fields.options === 'string') {
    try {
      fields.options = JSON.parse(fields.options);
    } catch {
      throw new DreactError('options: must be a JSON object', 'bad_input');
    }
  }
  const parsed = TurnBodySchema.safeParse(fields);
  if (!parsed.success) throw new DreactError(zodMessage(parsed.error), 'bad_input');
  return { body: parsed.data, uploads };
}
