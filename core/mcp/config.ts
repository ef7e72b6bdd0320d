/**
 * MCP servers in an agent file (`mcp: { servers: { <name>: … } }`): the zod schema of one server's
 * configuration — a local process over stdio (`command`, `args`, `env`, `cwd`) or a remote server
 * over Streamable HTTP (`url`, `headers`; `transport: sse` for the legacy HTTP+SSE transport) — and
 * the secret references its env and header values may hold. Pure.
 *
 * A value names a secret of the agent as `${secrets.NAME}` (`Authorization: "Bearer ${secrets.GH}"`);
 * the worker substitutes it when it connects (activities/mcp/connection.ts). The definition, its hash,
 * the timeline and history only ever hold the reference.
 */
import { z } from 'zod';
import { MCP_APPROVAL_MODES } from './approval';

/** A server name: one segment of a tool id (`mcp.<server>.<tool>`). */
export const MCP_SERVER_NAME_RE = /^[a-z][a-z0-9_]{0,39}$/;
/** `${secrets.NAME}` inside an env or header value. */
export const SECRET_REF_RE = /\$\{secrets\.([A-Za-z_][A-Za-z0-9_]{0,127})\}/g;

const Value = z
  .string()
  .max(8_000)
  .describe("A literal, or one holding ${secrets.NAME} references to the agent's secrets.");

const Common = {
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(3_600)
    .optional()
    .describe('Most seconds one tool call may take before it is abandoned (and retried). Default 60.'),
  retries: z
    .boolean()
    .optional()
    .describe(
      'false: a call that fails in transport is never retried (for servers whose tools must not run twice). Default true (3 attempts).',
    ),
  approval: z
    .enum(MCP_APPROVAL_MODES)
    .optional()
    .describe(
      "Which of the server's tool calls wait for a person's approval: destructive (default: tools annotated destructiveHint and not readOnlyHint), always, or never.",
    ),
};

/** Machine-to-machine OAuth (the client_credentials grant): the worker gets its own token, no login. */
export const McpClientCredentialsSchema = z
  .strictObject({
    client_id: z.string().min(1).max(500).describe('The client registered with the authorization server.'),
    client_secret: Value.optional().describe(
      'client_secret_basic authentication: a ${secrets.NAME} reference to the secret.',
    ),
    private_key: Value.optional().describe(
      'private_key_jwt authentication: a ${secrets.NAME} reference to the PEM private key.',
    ),
    algorithm: z
      .enum(['ES256', 'ES384', 'RS256', 'RS384', 'RS512', 'PS256', 'EdDSA'])
      .optional()
      .describe('The private key JWT signing algorithm (default ES256).'),
    issuer: z
      .string()
      .url()
      .optional()
      .describe('The authorization server these credentials belong to: they are presented to no other.'),
  })
  .refine((c) => (c.client_secret === undefined) !== (c.private_key === undefined), {
    message: 'give exactly one of client_secret and private_key',
  });

const HttpsOrLoopbackUrl = z
  .string()
  .max(2_000)
  .regex(/^https?:\/\/[^\s]+$/, 'an http:// or https:// URL');

/**
 * Enterprise-managed authorization (SEP-990, cross-app access): the worker exchanges an ID token
 * from the enterprise IdP for an ID-JAG there (RFC 8693 token exchange), then the ID-JAG for the
 * MCP server's access token at its authorization server (RFC 7523 jwt-bearer grant). No login.
 */
export const McpCrossAppAccessSchema = z.strictObject({
  idp_token_endpoint: HttpsOrLoopbackUrl.describe("The enterprise IdP's token endpoint (RFC 8693 token exchange)."),
  idp_client_id: z.string().min(1).max(500).describe('The client registered with the IdP for the token exchange.'),
  id_token: Value.describe(
    'The ID token the IdP exchanges for an ID-JAG: a ${secrets.NAME} reference (read at each exchange, so a rotated token is picked up).',
  ),
  client_id: z.string().min(1).max(500).describe("The client registered with the MCP server's authorization server."),
  client_secret: Value.describe(
    'client_secret_basic authentication at the authorization server: a ${secrets.NAME} reference to the secret.',
  ),
  issuer: z
    .string()
    .url()
    .optional()
    .describe("The MCP server's authorization server: the client secret is presented to no other."),
});

export const McpOAuthSchema = z
  .strictObject({
    client_credentials: McpClientCredentialsSchema.optional().describe(
      "The worker authenticates as itself with the client_credentials grant (no person logs in; one token for every tenant's turns).",
    ),
    cross_app_access: McpCrossAppAccessSchema.optional().describe(
      "Enterprise-managed authorization (SEP-990): the worker exchanges the enterprise IdP's ID token for an ID-JAG, and that for the server's token (no person logs in; one token for every tenant's turns).",
    ),
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/, 'an OAuth scope (no spaces or quotes)'))
      .max(50)
      .optional()
      .describe(
        "Scopes to ask for when the server's metadata and challenge name none (else the server's are asked for).",
      ),
  })
  .superRefine((o, ctx) => {
    if (o.client_credentials && o.cross_app_access)
      ctx.addIssue({
        code: 'custom',
        path: ['cross_app_access'],
        message: 'give one of client_credentials and cross_app_access: the worker gets its token one way',
        params: { rule: 'conflict' },
      });
  });

export const McpStdioServerSchema = z.strictObject({
  command: z.string().min(1).max(1_000).describe('The program to start (its stdin/stdout speak MCP).'),
  args: z.array(z.string().max(4_000)).max(100).optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), Value).optional(),
  cwd: z.string().min(1).max(1_000).optional().describe('Working directory (relative to the agent file).'),
  ...Common,
});

export const McpHttpServerSchema = z.strictObject({
  url: z
    .string()
    .max(2_000)
    .regex(/^https?:\/\/[^\s]+$/, 'an http:// or https:// URL'),
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/, 'a header name'), Value).optional(),
  transport: z
    .enum(['streamable_http', 'sse'])
    .optional()
    .describe('streamable_http (default) or the legacy HTTP+SSE transport.'),
  oauth: McpOAuthSchema.optional().describe(
    "The server is protected by OAuth 2.1: each tenant (and user) logs in once (dreact mcp login <server>, or the web chat's connect button); the worker connects with their tokens.",
  ),
  ...Common,
});

export const McpServerSchema = z.union([McpStdioServerSchema, McpHttpServerSchema]);
export type McpServerConfig = z.infer<typeof McpServerSchema>;
export type McpStdioServer = z.infer<typeof McpStdioServerSchema>;
export type McpHttpServer = z.infer<typeof McpHttpServerSchema>;

export const McpSchema = z.strictObject({
  servers: z
    .record(
      z.string().regex(MCP_SERVER_NAME_RE, 'an MCP server name is a-z first, then a-z 0-9 _ (at most 40 characters)'),
      McpServerSchema,
    )
    .describe('MCP servers by name; their tools are mcp.<name>.<tool>.'),
});
export type AgentMcp = z.infer<typeof McpSchema>;

/** The server's OAuth settings, when it is OAuth-protected. */
export const oauthOf = (c: McpServerConfig) => (isStdioServer(c) ? undefined : c.oauth);

export const isStdioServer = (c: McpServerConfig): c is McpStdioServer => 'command' in c;

/** The server's OAuth settings when each tenant (and user) logs in (not the worker's own token: client_credentials, cross_app_access). */
export const loginOAuthOf = (c: McpServerConfig) => {
  const o = oauthOf(c);
  return o && !o.client_credentials && !o.cross_app_access ? o : undefined;
};

/** The secret names a server's env, header, client-credential and ID-token values refer to, sorted. */
export function secretRefs(config: McpServerConfig): string[] {
  const values = Object.values(isStdioServer(config) ? (config.env ?? {}) : (config.headers ?? {}));
  const cc = oauthOf(config)?.client_credentials;
  const xaa = oauthOf(config)?.cross_app_access;
  for (const v of [cc?.client_secret, cc?.private_key, xaa?.id_token, xaa?.client_secret])
    if (v !== undefined) values.push(v);
  const names = new Set<string>();
  for (const v of values) for (const m of v.matchAll(SECRET_REF_RE)) names.add(m[1]!);
  return [...names].sort();
}

/** `value` with each `${secrets.NAME}` replaced by `secret(NAME)`. */
export function substituteSecrets(value: string, secret: (name: string) => string): string {
  return value.replace(SECRET_REF_RE, (_m, name: string) => secret(name));
}

/** Server names of one agent in a stable order. */
export function serverNames(mcp: AgentMcp | undefined): string[] {
  return Object.keys(mcp?.servers ?? {}).sort();
}
