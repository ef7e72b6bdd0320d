#!/usr/bin/env node
// dreact CLI entry: registers the TypeScript loader (tsx) and runs client/cli/main.ts.
require('tsx/cjs');
const { main } = require('../client/cli/main.ts');
main(process.argv).then((code) => process.exit(code));
