/**
 * A refused Temporal connection as ONE line naming the setting to fix — never a gRPC stack.
 * Reads the errors of both transports: the client's (grpc-js: status code + details, Node's TLS
 * error codes) and the worker's (the SDK core's `TransportError` text from rustls / hyper).
 */
import {
  TemporalConnectionError,
  settingName,
  tlsEnabled,
  type ResolvedTemporalConnection,
  type TemporalSetting,
} from './connection-settings';

/** Every message in an error and its causes, one string (lower case) to match on. */
function allText(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e && depth < 6; depth++) {
    if (e instanceof Error) {
      parts.push(e.message);
      const extra = e as Error & { code?: unknown; details?: unknown };
      if (typeof extra.code === 'string') parts.push(extra.code);
      if (typeof extra.details === 'string') parts.push(extra.details);
      e = (e as { cause?: unknown }).cause;
    } else {
      parts.push(String(e));
      break;
    }
  }
  return parts.join(' | ').toLowerCase();
}

function grpcCode(err: unknown): number | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 6; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

const UNAUTHENTICATED = 16;
const PERMISSION_DENIED = 7;
const NOT_FOUND = 5;

const matches = (text: string, ...patterns: RegExp[]) => patterns.some((p) => p.test(text));

/**
 * The one line for a failed connection or call: which setting to fix, with the server's own short
 * reason where it helps. `resolved` says where each setting came from, so the line names the
 * variable, flag or profile field the user actually set.
 */
export function describeConnectionError(err: unknown, resolved: ResolvedTemporalConnection): string {
  if (err instanceof TemporalConnectionError) return err.message;
  const text = allText(err);
  const code = grpcCode(err);
  const at = `Temporal at ${resolved.address}`;
  const name = (s: TemporalSetting) => settingName(resolved, s);
  const tlsOn = tlsEnabled(resolved);
  const hasCert = resolved.sources.clientCert !== undefined;

  if (code === NOT_FOUND || matches(text, /namespace .* (is )?not found/, /namespace not found/))
    return (
      `${at}: unknown namespace "${resolved.namespace}" (${name('namespace')}): fix the name, or create it ` +
      `(temporal operator namespace create --namespace ${resolved.namespace}; on Temporal Cloud, in the Cloud UI or with tcld)`
    );

  // TLS: the server's certificate, as this client checks it.
  if (
    matches(
      text,
      /altname|hostname\/ip does not match|notvalidforname|not valid for name|ip address mismatch|name mismatch/,
    )
  )
    return `${at}: the server's certificate is not valid for this host name: set ${name('serverName')} to the name in its certificate, or fix ${name('address')}`;
  if (
    matches(
      text,
      /self[- ]signed certificate/,
      /unable to (verify|get local issuer)/,
      /unknownissuer|unknown issuer/,
      /certificate verify failed/,
      /invalid peer certificate/,
      /cert_untrusted|unable_to_verify_leaf_signature|depth_zero_self_signed_cert|self_signed_cert_in_chain/,
      /certificate has expired|certexpired|cert_has_expired/,
    ) &&
    !matches(text, /alert|received fatal/)
  )
    return resolved.sources.serverCACert
      ? `${at}: the server's certificate is not signed by the CA in ${name('serverCACert')}${resolved.tlsFiles.serverCACert ? ` (${resolved.tlsFiles.serverCACert})` : ''}: point it at the CA that signed the server's certificate`
      : `${at}: the server's certificate is not trusted: set ${name('serverCACert')} to the CA that signed it`;

  // TLS: this client's certificate, as the server checks it (a TLS alert from the server).
  if (
    matches(
      text,
      /certificate required|certificaterequired|alert.*(bad certificate|unknown ca|certificate unknown|handshake failure|access denied)/,
      /(bad ?certificate|unknown ?ca|certificate ?unknown|handshake ?failure|access ?denied).*alert/,
      /received fatal alert/,
      /tlsv13 alert|sslv3 alert|tlsv1 alert/,
    )
  )
    return hasCert
      ? `${at}: the server refused the client certificate ${name('clientCert')}${resolved.tlsFiles.clientCert ? ` (${resolved.tlsFiles.clientCert})` : ''}: use one signed by a CA the server (or the Cloud namespace) accepts, with its key in ${name('clientKey')}`
      : `${at}: the server requires a client certificate (mTLS): set ${name('clientCert')} and ${name('clientKey')}`;

  // TLS on one side only.
  if (
    matches(
      text,
      /wrong version number|packet length too long|invalidcontenttype|corrupt message|http\/1|tls handshake eof/,
    )
  )
    return tlsOn
      ? `${at}: TLS is on but the server does not speak TLS: set ${name('tls')}=false (or point ${name('address')} at its TLS port)`
      : `${at}: the server speaks TLS but this connection does not: set ${name('tls')}=true (and ${name('serverCACert')} if its CA is private)`;

  // Authentication: an API key (or the identity in a certificate) the server refused.
  if (
    code === UNAUTHENTICATED ||
    code === PERMISSION_DENIED ||
    matches(text, /unauthori[sz]ed|unauthenticated|permission denied|jwt|api key|token/)
  ) {
    if (resolved.apiKey !== undefined)
      return `${at}: the server refused the API key in ${name('apiKey')} (expired, revoked, or without access to namespace "${resolved.namespace}"): create a new key for this namespace and set it`;
    if (hasCert)
      return `${at}: the server refused the client certificate ${name('clientCert')} for namespace "${resolved.namespace}": use a certificate the namespace accepts, or set ${name('apiKey')}`;
    return `${at}: the server requires authentication for namespace "${resolved.namespace}": set ${name('apiKey')} (or a client certificate: ${name('clientCert')} + ${name('clientKey')})`;
  }

  if (
    matches(
      text,
      /econnrefused|connection refused|enotfound|eai_again|getaddrinfo|dns error|failed to lookup|no such host/,
      /failed to connect before the deadline|deadline exceeded|timed out|timeout/,
      /ehostunreach|enetunreach|econnreset|no connection established|connection dropped|transport error|unavailable|tcp connect error/,
    ) ||
    code === 14 ||
    code === 4
  )
    return tlsOn && matches(text, /econnreset|connection dropped|eof|closed/)
      ? `${at}: the connection closed during the TLS handshake: check ${name('address')} and the TLS settings (${name('serverCACert')}, ${name('clientCert')})`
      : `${at} is unreachable (${firstLine(err)}): check ${name('address')} — is the server running and this host:port reachable from here?`;

  return `${at}: ${firstLine(err)} (settings: ${name('address')}, ${name('namespace')})`;
}

/** The error's own first line, without the transport's prefixes; no stack. */
function firstLine(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  return (
    raw
      .split('\n')[0]!
      .replace(/^\d+ [A-Z_]+: /, '')
      .trim()
      .slice(0, 200) || 'connection failed'
  );
}
