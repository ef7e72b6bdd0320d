/**
 * The worker process (workers/main.ts) with more named scripts for the scripted model, read from
 * the JSON file DREACT_TEST_SCRIPTS names ({ name: ScriptSpec }): for integration tests that kill a
 * worker process running agents whose files name their scripts (`model: { script: <name> }`).
 * Run with `node --import tsx test/support/scripted-worker.ts`.
 */
import { readFileSync } from 'node:fs';
import { BUILTIN_SCRIPTS } from '../../activities/model/adapters/scripts';

const file = process.env.DREACT_TEST_SCRIPTS;
if (file) Object.assign(BUILTIN_SCRIPTS, JSON.parse(readFileSync(file, 'utf8')));
require('../../workers/main');
