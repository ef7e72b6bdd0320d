/**
 * An MCP tool's input JSON Schema → the zod schema its declaration validates calls with
 * (`z.fromJSONSchema`, zod 4.6). A schema zod cannot represent (external `$ref`, `if/then/else`,
 * an unknown type…) or that does not describe an object is refused here — at worker start, where it
 * is reported — never at call time. Pure.
 */
import { z } from 'zod';

export type McpParamsSchema = { ok: true; params: z.ZodType } | { ok: false; reason: string };

export function mcpParamsSchema(inputSchema: unknown): McpParamsSchema {
  if (inputSchema === null || typeof inputSchema !== 'object' || Array.isArray(inputSchema))
    return { ok: false, reason: 'inputSchema is not a JSON Schema object' };
  const s = inputSchema as Record<string, unknown>;
  if (s.type !== undefined && s.type !== 'object')
    return { ok: false, reason: `inputSchema has type ${JSON.stringify(s.type)}; a tool's params must be an object` };
  let params: z.ZodType;
  try {
    params = z.fromJSONSchema({ ...s, type: 'object' } as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    return { ok: false, reason: `unsupported inputSchema: ${(err as Error).message}` };
  }
  try {
    // The prompt shows the schema back: it must convert both ways.
    z.toJSONSchema(params, { io: 'input', unrepresentable: 'any' });
  } catch (err) {
    return { ok: false, reason: `inputSchema cannot be shown to the model: ${(err as Error).message}` };
  }
  const type = (params as unknown as { _zod?: { def?: { type?: string } } })._zod?.def?.type;
  if (type !== 'object') return { ok: false, reason: `inputSchema reads as a ${String(type)}, not an object` };
  return { ok: true, params };
}
