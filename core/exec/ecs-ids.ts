/**
 * ECS identifiers of an exec (pure). Limits from the ECS API: `clientToken` at most 64 ASCII
 * characters (24-hour idempotency window: the same token and parameters return the original task);
 * `startedBy` at most 36 characters of `[A-Za-z0-9-/_]`; tag values at most 256 characters.
 */
export const STARTED_BY_PREFIX = 'dreact-exec-';
export const CLIENT_TOKEN_MAX = 64;
export const STARTED_BY_MAX = 36;
/** ECS limit on the JSON of a RunTask's container overrides. */
export const ECS_OVERRIDES_MAX_BYTES = 8192;

export const TAG_EXEC_ID = 'dreact:exec-id';
export const TAG_WORKFLOW_ID = 'dreact:workflow-id';
export const TAG_CONVERSATION_ID = 'dreact:conversation-id';

/** `clientToken` from a hex digest of the exec id (the caller hashes; core stays free of node:crypto). */
export function clientTokenOf(execIdSha256Hex: string): string {
  if (!/^[0-9a-f]{64}$/.test(execIdSha256Hex))
    throw new Error(`clientTokenOf needs a sha256 hex digest, got ${JSON.stringify(execIdSha256Hex)}`);
  return execIdSha256Hex.slice(0, CLIENT_TOKEN_MAX);
}

/** `startedBy`: the fixed prefix + 24 hex of the digest (36 characters), filterable with ListTasks. */
export function startedByOf(execIdSha256Hex: string): string {
  if (!/^[0-9a-f]{64}$/.test(execIdSha256Hex))
    throw new Error(`startedByOf needs a sha256 hex digest, got ${JSON.stringify(execIdSha256Hex)}`);
  return (STARTED_BY_PREFIX + execIdSha256Hex).slice(0, STARTED_BY_MAX);
}

/** Checks a tag value against ECS's 256-character limit (a clear error instead of an ECS rejection). */
export function tagValue(name: string, value: string): { key: string; value: string } {
  if (value.length === 0 || value.length > 256)
    throw new Error(`ECS tag ${name} must be 1–256 characters, got ${value.length}`);
  return { key: name, value };
}

/** UTF-8 byte length of the overrides' JSON, as ECS counts it; throws past the limit. */
export function checkOverridesSize(overrides: unknown, max = ECS_OVERRIDES_MAX_BYTES): number {
  const json = JSON.stringify(overrides);
  let bytes = 0;
  for (const ch of json) {
    const cp = ch.codePointAt(0)!;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  if (bytes > max)
    throw new Error(
      `ECS container overrides are ${bytes} bytes, over ECS's ${max}-byte limit: pass references (presigned URLs), not payloads`,
    );
  return bytes;
}
