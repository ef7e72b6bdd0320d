/** Loopback ports for the embedded stack's servers. */
import { createServer } from 'node:net';

export async function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolvePort) => {
    const srv = createServer();
    srv.once('error', () => resolvePort(false));
    srv.listen(port, host, () => srv.close(() => resolvePort(true)));
  });
}

/** The preferred loopback port when free, else (or for 0) any free one. */
export async function freePort(preferred: number): Promise<number> {
  if (preferred > 0 && (await portFree(preferred))) return preferred;
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}
