#!/usr/bin/env node
// dreact CLI entry. In the repository: the TypeScript sources through the tsx loader
// (apps/cli/main.ts); in the installed package (no sources): the compiled CLI, dist/cli.cjs.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const source = join(__dirname, '..', 'apps', 'cli', 'main.ts');
let main;
if (existsSync(source)) {
  require('tsx/cjs');
  ({ main } = require(source));
} else {
  ({ main } = require('../dist/cli.cjs'));
}
main(process.argv).then((code) => process.exit(code));
