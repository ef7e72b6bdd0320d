import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { buildWeb, webDistStale, WEB_DIST } from '../../../apps/gateway/web-bundle';

test('the web bundle is rebuilt when a file it was built from is newer than it, and only then', async () => {
  await buildWeb();
  assert.equal(webDistStale(), false);
  const inputs = JSON.parse(readFileSync(join(WEB_DIST, 'inputs.json'), 'utf8')) as string[];
  // Its own sources and the core code they import are listed; node_modules are not.
  for (const f of ['apps/web/app.tsx', 'apps/web/components/turn.tsx', 'core/stream/sse.ts', 'apps/web/app.css'])
    assert.ok(inputs.includes(f), `${f} in ${inputs.join(', ')}`);
  assert.ok(!inputs.some((f) => f.includes('node_modules')));
  // A source changed after the build (as a pull does): app.js is older than it.
  const app = join(WEB_DIST, 'app.js');
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(app, hourAgo, hourAgo);
  assert.equal(webDistStale(), true);
  await buildWeb();
  assert.equal(webDistStale(), false);
  assert.ok(statSync(app).mtimeMs > hourAgo.getTime());
});
