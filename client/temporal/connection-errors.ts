/**
 * A refused Temporal connection as ONE line naming the setting to fix — never a gRPC stack.
 * Reads the errors of both transports: the worker's (the SDK core's `TransportError` text from
 * rustls / hyper: precise) and the client's (grpc-js: a status code and details, or only "Failed to
 * connect before the deadline" — then `probeTransport` repeats the TCP and TLS handshake with
 * Node's own TLS to learn what the server refused).
 */
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import {
  TemporalConnectionError,
  settingName,
  tlsEnabled,
  type ResolvedTemporalConnection,
  type TemporalSetting,
} from './connection-settings';

export type FailureKind =
  | 'namespace'
  | 'server-name'
  | 'untrusted-server'
  | 'client-cert-required'
  | 'client-cert-refused'
  | 'tls-to-plaintext'
  | 'plaintext-to-tls'
  | 'auth'
  | 'unreachable';

/** What the transport probe learned, as an error describeConnectionError reads. */
export class TransportProbeError extends Error {
  constructor(
    readonly kind: FailureKind,
    detail: string,
  ) {
    super(detail);
    this.name = 'TransportProbeError';
  }
}

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

const NOT_FOUND = 5;
const PERMISSION_DENIED = 7;
const UNAVAILABLE = 14;
const UNAUTHENTICATED = 16;

const RULES: Array<[FailureKind, RegExp]> = [
  ['namespace', /namespace \S+ is not found|namespace not found/],
  ['server-name', /altname|hostname\/ip does not match|notvalidforname|not valid for name|ip address mismatch/],
  // The server's alerts about this client's certificate (before the checks of the server's own).
  ['client-cert-required', /certificate ?required/],
  [
    'client-cert-refused',
    /alert[ _:]*(bad[ _]certificate|unknown[ _]ca|certificate[ _]unknown|unsupported[ _]certificate|certificate[ _]revoked|certificate[ _]expired|access[ _]denied|handshake[ _]failure|decrypt[ _]error)|(badcertificate|unknownca|certificateunknown|accessdenied|handshakefailure)\)?"?\s*\)|received fatal alert/,
  ],
  [
    'untrusted-server',
    /self[- _]signed|unable[ _]to[ _](verify|get[ _]local[ _]issuer)|unknownissuer|certificate verify failed|invalid peer certificate|cert_untrusted|certificate has expired|cert_has_expired|expired\b.*certificate/,
  ],
  ['tls-to-plaintext', /wrong[ _]version[ _]number|packet length too long|invalidcontenttype|http_request/],
  ['auth', /request unauthori[sz]ed|unauthenticated|permission denied|invalid (api key|token)|jwt/],
  [
    'unreachable',
    /econnrefused|connection refused|enotfound|eai_again|getaddrinfo|dns error|failed to lookup|ehostunreach|enetunreach|tcp connect error|failed to connect before the deadline|deadline exceeded|timed out/,
  ],
];

/** The kind of a failure, from its gRPC status and its text (undefined: not a connection failure we know). */
export function classifyConnectionError(err: unknown): FailureKind | undefined {
  if (err instanceof TransportProbeError) return err.kind;
  const text = allText(err);
  const code = grpcCode(err);
  if (code === NOT_FOUND && /namespace/.test(text)) return 'namespace';
  if (code === UNAUTHENTICATED || code === PERMISSION_DENIED) return 'auth';
  for (const [kind, re] of RULES) if (re.test(text)) return kind;
  if (code === UNAVAILABLE) return 'unreachable';
  return undefined;
}

/**
 * The one line for a failed connection or call: which setting to fix, with the server's own short
 * reason where it helps. `resolved` says where each setting came from, so the line names the
 * variable, flag or profile field the user actually set.
 */
export function describeConnectionError(err: unknown, resolved: ResolvedTemporalConnection): string {
  if (err instanceof TemporalConnectionError) return err.message;
  const at = `Temporal at ${resolved.address}`;
  const name = (s: TemporalSetting) => settingName(resolved, s);
  const file = (s: 'clientCert' | 'serverCACert') => (resolved.tlsFiles[s] ? ` (${resolved.tlsFiles[s]})` : '');
  const hasCert = resolved.sources.clientCert !== undefined;
  switch (classifyConnectionError(err)) {
    case 'namespace':
      return (
        `${at}: unknown namespace "${resolved.namespace}" (${name('namespace')}): fix the name, or create it ` +
        `(temporal operator namespace create --namespace ${resolved.namespace}; on Temporal Cloud, in the Cloud UI or with tcld)`
      );
    case 'server-name':
      return `${at}: the server's certificate is not valid for this host name: set ${name('serverName')} to the name in its certificate, or fix ${name('address')}`;
    case 'untrusted-server':
      return resolved.sources.serverCACert
        ? `${at}: the server's certificate is not signed by the CA in ${name('serverCACert')}${file('serverCACert')}: point it at the CA that signed the server's certificate`
        : `${at}: the server's certificate is not trusted: set ${name('serverCACert')} to the CA that signed it`;
    case 'client-cert-required':
      return hasCert
        ? `${at}: the server did not accept the client certificate ${name('clientCert')}${file('clientCert')}: use one signed by a CA the server (or the Cloud namespace) accepts`
        : `${at}: the server requires a client certificate (mTLS): set ${name('clientCert')} and ${name('clientKey')}`;
    case 'client-cert-refused':
      return hasCert
        ? `${at}: the server refused the client certificate ${name('clientCert')}${file('clientCert')}: use one signed by a CA the server (or the Cloud namespace) accepts, with its key in ${name('clientKey')}`
        : `${at}: the server refused the TLS handshake: it may require a client certificate (${name('clientCert')} + ${name('clientKey')})`;
    case 'tls-to-plaintext':
      return `${at}: TLS is on but the server does not speak TLS: turn it off (${tlsSwitch(resolved, false)}) or point ${name('address')} at its TLS port`;
    case 'plaintext-to-tls':
      return `${at}: the server speaks TLS but this connection does not: turn it on (${tlsSwitch(resolved, true)}; and ${name('serverCACert')} if its CA is private)`;
    case 'auth':
      if (resolved.apiKey !== undefined)
        return `${at}: the server refused the API key in ${name('apiKey')} (expired, revoked, or without access to namespace "${resolved.namespace}"): create a new key for this namespace and set it`;
      if (hasCert)
        return `${at}: the server refused the client certificate ${name('clientCert')} for namespace "${resolved.namespace}": use a certificate the namespace accepts, or set ${name('apiKey')}`;
      return `${at}: the server requires authentication for namespace "${resolved.namespace}": set ${name('apiKey')} (or a client certificate: ${name('clientCert')} + ${name('clientKey')})`;
    case 'unreachable':
      return `${at} is unreachable (${firstLine(err)}): check ${name('address')} — is the server running, and this host:port reachable from here?`;
    default:
      return `${at}: ${firstLine(err)} (settings: ${name('address')}, ${name('namespace')})`;
  }
}

/** How to turn TLS on or off where the user set it. */
function tlsSwitch(resolved: ResolvedTemporalConnection, on: boolean): string {
  switch (resolved.sources.tls) {
    case 'flag':
      return on ? '--tls' : 'drop --tls';
    case 'file':
    case 'profile':
      return `tls.disabled = ${!on} in profile "${resolved.profile}" of ${resolved.configFile ?? 'temporal.toml'}`;
    default:
      return `TEMPORAL_TLS=${on}`;
  }
}

/** The error's own first line, without the transport's prefixes; no stack. */
function firstLine(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  const line = raw.split('\n')[0] ?? '';
  const os = /Os \{ code: \d+, kind: \w+, message: "([^"]+)"/.exec(line);
  return (
    (os?.[1] ?? line)
      .replace(/^\d+ [A-Z_]+: /, '')
      .trim()
      .slice(0, 160) || 'connection failed'
  );
}

/**
 * Repeats the transport's handshake with Node's TCP and TLS, the same settings (CA, client
 * certificate, server name, ALPN h2), to learn why the gRPC client could not connect: refused or
 * unreachable, TLS on one side only, a certificate either side refused. Undefined: the handshake
 * went through (the failure is elsewhere). Bounded by `timeoutMs`.
 */
export async function probeTransport(
  resolved: ResolvedTemporalConnection,
  timeoutMs = 3000,
): Promise<TransportProbeError | undefined> {
  const colon = resolved.address.lastIndexOf(':');
  const host = resolved.address.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(resolved.address.slice(colon + 1));
  const tcp = await new Promise<Error | undefined>((resolve) => {
    const s = netConnect({ host, port, timeout: timeoutMs });
    s.once('connect', () => (s.destroy(), resolve(undefined)));
    s.once('timeout', () => (s.destroy(), resolve(new Error(`no answer within ${timeoutMs} ms`))));
    s.once('error', (e) => resolve(e));
  });
  if (tcp) return new TransportProbeError('unreachable', `${tcp.message}`);
  const tls = typeof resolved.tls === 'object' ? resolved.tls : {};
  const handshake = (verify: boolean) =>
    new Promise<Error | undefined>((resolve) => {
      const servername = tls.serverNameOverride ?? (/^[\d.]+$|:/.test(host) ? undefined : host);
      const s = tlsConnect({
        host,
        port,
        ALPNProtocols: ['h2'],
        rejectUnauthorized: verify,
        ...(servername ? { servername } : {}),
        ...(tls.serverRootCACertificate ? { ca: Buffer.from(tls.serverRootCACertificate) } : {}),
        ...(tls.clientCertPair
          ? { cert: Buffer.from(tls.clientCertPair.crt), key: Buffer.from(tls.clientCertPair.key) }
          : {}),
        timeout: timeoutMs,
      });
      let settled = false;
      const done = (e: Error | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        s.destroy();
        resolve(e);
      };
      const timer = setTimeout(() => done(new Error(`no TLS answer within ${timeoutMs} ms`)), timeoutMs);
      s.once('error', (e) => done(e));
      s.once('timeout', () => done(new Error(`no TLS answer within ${timeoutMs} ms`)));
      // TLS 1.3: the server's verdict on the client's certificate comes after the handshake — an
      // alert, or (some servers) the connection closed at once.
      s.once('secureConnect', () => {
        s.once('close', () =>
          done(
            new TransportProbeError(
              tls.clientCertPair ? 'client-cert-refused' : 'client-cert-required',
              'the server closed the connection right after the TLS handshake',
            ),
          ),
        );
        setTimeout(() => done(undefined), 300);
      });
    });
  if (!tlsEnabled(resolved)) {
    // A TLS server answers a handshake — completing it, or refusing this client's certificate with an alert.
    const asTls = await handshake(false);
    const tlsAnswer =
      !asTls ||
      asTls instanceof TransportProbeError ||
      /alert|certificate/i.test(`${asTls.message} ${(asTls as NodeJS.ErrnoException).code ?? ''}`);
    return tlsAnswer ? new TransportProbeError('plaintext-to-tls', 'the server answered a TLS handshake') : undefined;
  }
  const refused = await handshake(true);
  if (!refused) return undefined;
  if (refused instanceof TransportProbeError) return refused;
  const kind = classifyConnectionError(refused);
  return new TransportProbeError(kind ?? 'unreachable', refused.message);
}
