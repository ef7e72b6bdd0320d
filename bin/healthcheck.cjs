#!/usr/bin/env node
// The images' health command: GET a health URL, exit 0 on a 2xx answer within 3 s, else 1 (with
// the reason on stderr). Usage: node bin/healthcheck.cjs [url]
//   default: the worker's readiness, http://<DREACT_HEALTH_ADDR>/readyz (0.0.0.0 reads as 127.0.0.1);
//   the gateway's: node bin/healthcheck.cjs http://127.0.0.1:8787/healthz
const addr = (process.env.DREACT_HEALTH_ADDR || '127.0.0.1:8081')
  .replace(/^0\.0\.0\.0:/, '127.0.0.1:')
  .replace(/^:/, '127.0.0.1:');
const url = process.argv[2] || `http://${addr}/readyz`;
fetch(url, { signal: AbortSignal.timeout(3000) }).then(
  (res) => {
    if (res.ok) process.exit(0);
    process.stderr.write(`healthcheck: ${url} answered ${res.status}\n`);
    process.exit(1);
  },
  (err) => {
    process.stderr.write(`healthcheck: ${url}: ${err.cause?.code || err.message}\n`);
    process.exit(1);
  },
);
