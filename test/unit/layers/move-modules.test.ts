/** scripts/move-modules.ts: a move re-points every relative import, from and to the moved files. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { movedPath, parseMoves, rewriteSpecifiers } from '../../../scripts/move-modules';

const moves = parseMoves([
  'client/gateway/sse-client.ts=client/sse-client.ts',
  'client/cli=apps/cli',
  'workflows/definitions.ts=contract/definitions.ts',
]);

test('movedPath maps files, folders and extensionless module paths; the first matching move wins', () => {
  assert.equal(movedPath('client/cli/main.ts', moves), 'apps/cli/main.ts');
  assert.equal(movedPath('client/cli', moves), 'apps/cli');
  assert.equal(movedPath('workflows/definitions', moves), 'contract/definitions');
  assert.equal(movedPath('client/gateway/sse-client', moves), 'client/sse-client');
  assert.equal(movedPath('client/api.ts', moves), 'client/api.ts');
  assert.equal(movedPath('workflows/definitions-old', moves), 'workflows/definitions-old');
});

test('rewriteSpecifiers re-points imports of moved modules and the moved file’s own imports, nothing else', () => {
  const cli = [
    "import { a } from '../api';",
    "import type { B } from '../../workflows/definitions';",
    "export { parseSse } from '../gateway/sse-client';",
    "const m = () => import('./commands');",
    "const r = require('../../core/turn/ids');",
    "// from '../api' in a comment, and the string '../api', stay",
    "const s = '../api';",
  ].join('\n');
  assert.equal(
    rewriteSpecifiers('client/cli/main.ts', cli, moves),
    [
      "import { a } from '../../client/api';",
      "import type { B } from '../../contract/definitions';",
      "export { parseSse } from '../../client/sse-client';",
      "const m = () => import('./commands');",
      "const r = require('../../core/turn/ids');",
      "// from '../api' in a comment, and the string '../api', stay",
      "const s = '../api';",
    ].join('\n'),
  );
  assert.equal(
    rewriteSpecifiers('test/x.test.ts', "import { main } from '../client/cli/main';", moves),
    "import { main } from '../apps/cli/main';",
  );
});

test('a move without OLD=NEW is refused with the argument named', () => {
  assert.throws(() => parseMoves(['client/cli']), /move "client\/cli": expected OLD=NEW/);
});
