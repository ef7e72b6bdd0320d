import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deploymentFromEnv, shutdownGraceSeconds, versionedDeployment } from '../../../workers/deployment';

test('the deployment version comes from both names or neither', () => {
  assert.equal(deploymentFromEnv({}), undefined);
  assert.deepEqual(deploymentFromEnv({ DREACT_DEPLOYMENT_NAME: 'dreact', DREACT_BUILD_ID: '2026.11.24-1' }), {
    version: { deploymentName: 'dreact', buildId: '2026.11.24-1' },
    useWorkerVersioning: true,
    defaultVersioningBehavior: 'PINNED',
  });
  assert.throws(
    () => deploymentFromEnv({ DREACT_BUILD_ID: 'b1' }),
    /needs both DREACT_DEPLOYMENT_NAME and DREACT_BUILD_ID/,
  );
  assert.throws(() => deploymentFromEnv({ DREACT_DEPLOYMENT_NAME: 'd' }), /needs both/);
  assert.throws(() => versionedDeployment('dreact', 'has space'), /invalid build id "has space"/);
  assert.throws(() => versionedDeployment('', 'b'), /invalid deployment name/);
});

test('the shutdown grace time is a bounded number of seconds', () => {
  assert.equal(shutdownGraceSeconds(undefined), 20);
  assert.equal(shutdownGraceSeconds(' '), 20);
  assert.equal(shutdownGraceSeconds('2.5'), 2.5);
  assert.equal(shutdownGraceSeconds('0'), 0);
  for (const bad of ['-1', 'soon', '3601'])
    assert.throws(() => shutdownGraceSeconds(bad), /DREACT_SHUTDOWN_GRACE_SECONDS must be a number of seconds/);
});
