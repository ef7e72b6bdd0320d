/**
 * The worker's end of the wasm sandbox's tool bridge: each request line the sandbox process writes
 * on its fd 3 (a `dreact_tools.call` from the program) goes unchanged to the exec's tool supervisor
 * over its Unix socket — the same supervisor, offer, parameter checks and timeline records as a
 * bubblewrap or Docker program gets — and the supervisor's answer line goes back. The sandbox
 * waits for each answer, so requests are served one at a time.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';

/** Largest request accepted from the sandbox (the supervisor's own limit is lower). */
const MAX_LINE_BYTES = 1024 * 1024;

export function bridgeTools(sandbox: Duplex, socketPath: string | undefined): void {
  let buf = Buffer.alloc(0);
  let busy = Promise.resolve();
  sandbox.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
      const line = buf.subarray(0, nl);
      buf = buf.subarray(nl + 1);
      busy = busy.then(() => answer(sandbox, line, socketPath));
    }
    if (buf.length > MAX_LINE_BYTES) {
      buf = Buffer.alloc(0);
      busy = busy.then(() => reply(sandbox, { ok: false, error: `request over ${MAX_LINE_BYTES} bytes` }));
    }
  });
  sandbox.on('error', () => undefined); // the sandbox ended (timeout, stop): nothing to answer
}

function reply(sandbox: Duplex, body: Record<string, unknown>): Promise<void> {
  return writeLine(sandbox, Buffer.from(JSON.stringify(body)));
}

function writeLine(sandbox: Duplex, line: Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (sandbox.destroyed) return resolve();
    sandbox.write(Buffer.concat([line, Buffer.from('\n')]), () => resolve());
  });
}

async function answer(sandbox: Duplex, line: Buffer, socketPath: string | undefined): Promise<void> {
  if (!socketPath) return reply(sandbox, { ok: false, error: 'no tool supervisor for this exec' });
  try {
    await writeLine(sandbox, await ask(socketPath, line));
  } catch (err) {
    await reply(sandbox, { ok: false, error: `the tool supervisor is not reachable: ${(err as Error).message}` });
  }
}

/** One request to the supervisor: a line out, its answer line back. */
function ask(socketPath: string, line: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(socketPath, () => socket.write(Buffer.concat([line, Buffer.from('\n')])));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.once('end', () => {
      const raw = Buffer.concat(chunks);
      const nl = raw.indexOf(10);
      resolve(nl >= 0 ? raw.subarray(0, nl) : raw);
    });
    socket.once('error', reject);
  });
}
