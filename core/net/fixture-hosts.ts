/**
 * Fixture hosts: names an eval run in THIS process serves on a loopback port of its own
 * (`<suite>.fixtures.invalid` → 127.0.0.1:<ephemeral port>, apps/cli/eval-fixtures.ts). The fetch
 * guard maps such a name to exactly that loopback port and nothing else — no private address is
 * opened in general, and a name under `.invalid` (RFC 6761) never resolves anywhere else, so the
 * URL the model sees is the same on every run (the cassette records it). Only a worker in the
 * process that serves the pages (the embedded stack, a test's worker) can reach them. No I/O:
 * a map the eval run fills and activities/net/address-guard.ts reads.
 */

const hosts = new Map<string, number>();

/** The reserved suffix of every fixture host name. */
export const FIXTURE_HOST_SUFFIX = '.fixtures.invalid';

/** Maps `host` (a name ending in `.fixtures.invalid`) to a loopback port until the returned release. */
export function registerFixtureHost(host: string, port: number): () => void {
  const name = host.toLowerCase();
  if (!name.endsWith(FIXTURE_HOST_SUFFIX)) throw new Error(`fixture host ${host} must end in ${FIXTURE_HOST_SUFFIX}`);
  if (hosts.has(name)) throw new Error(`fixture host ${host} is already served in this process (another eval run)`);
  hosts.set(name, port);
  return () => {
    if (hosts.get(name) === port) hosts.delete(name);
  };
}

/** The loopback port a fixture host is served on in this process, if it is. */
export function fixturePort(host: string): number | undefined {
  return hosts.get(host.toLowerCase());
}
