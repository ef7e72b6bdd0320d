/**
 * DNS-rebinding protection of `/mcp` (the MCP Streamable HTTP spec: servers MUST validate
 * `Origin`): a request is answered only when its `Host` names the gateway itself — a loopback
 * name or one of its configured host names (DREACT_GATEWAY_HOSTNAMES), port ignored — and its
 * `Origin`, when a browser sends one, is on the CORS allow-list (hardening.ts `originRefusal`).
 * A refusal is a 403 with a JSON-RPC error, what an MCP client reads.
 *
 * Why not the SDK's own switches: `enableDnsRebindingProtection`/`allowedHosts`/`allowedOrigins`
 * of its Streamable HTTP transport are deprecated in @modelcontextprotocol/sdk 1.32 ("use external
 * middleware") and match `Host` with its port exactly; the SDK's middleware
 * (`hostHeaderValidation`, port-agnostic) is for Express. This is that middleware's rule, for Hono.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { originRefusal } from './hardening';

/** The host names a gateway always answers to (the SDK's `localhostHostValidation` list). */
export const LOOPBACK_HOSTNAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** A 403 JSON-RPC error (the SDK's code for a refused transport request). */
const refuse = (c: Context, message: string) =>
  c.json({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }, 403);

/** The hostname of a `Host` header value (lower case, brackets kept for IPv6), else undefined. */
function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
}

export function mcpRebindingGuard(o: { hostnames: readonly string[]; origins: readonly string[] }): MiddlewareHandler {
  const hosts = new Set([...LOOPBACK_HOSTNAMES, ...o.hostnames].map((h) => hostnameOf(h) ?? h));
  const originProblem = originRefusal(o.origins);
  return async (c, next) => {
    // A server behind @hono/node-server builds the request URL from Host; a Request handed to
    // `fetch` directly may carry none, and then its URL names the host.
    const host = c.req.header('host') ?? new URL(c.req.url).host;
    const hostname = hostnameOf(host);
    if (hostname === undefined || !hosts.has(hostname))
      return refuse(
        c,
        `Host ${JSON.stringify(host)} is not one of this gateway's host names (loopback or DREACT_GATEWAY_HOSTNAMES): refused against DNS rebinding`,
      );
    const problem = originProblem(c.req.header('origin'));
    if (problem) return refuse(c, `${problem}: refused against DNS rebinding`);
    await next();
  };
}
