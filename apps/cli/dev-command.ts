/**
 * `dreact dev`: the local stack in the foreground, then what to do next — the agents it loaded, a
 * first turn, where an API key comes from, and the gateway (HTTP API + web chat) with its URL.
 */
import type { Command } from 'commander';

/** The lines `dreact dev` prints once the stack is up. */
export function devNextSteps(opts: { agents: readonly string[]; gatewayPort: number }): string[] {
  return [
    `Agents:      ${opts.agents.join(', ') || '(none)'}  (dreact agents list; files in DREACT_AGENTS_DIR, default ./agents)`,
    '',
    'Next steps (in another terminal):',
    '  dreact turn "hello there"                            a turn, streamed here',
    '  dreact keys create --tenant local --project demo     an API key for the gateway (shown once, last line)',
    `  dreact gateway                                       the HTTP API and the web chat: http://127.0.0.1:${opts.gatewayPort}/`,
  ];
}

export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description('start the local stack in the foreground (Temporal dev server with UI, Postgres/PGlite, worker)')
    .action(async () => {
      const { startEmbeddedStack, stackHome } = require('../stack/embedded') as typeof import('../stack/embedded');
      const { cliTemporalConnection } = require('./session') as typeof import('./session');
      const { listCurrentAgents } = require('../../store/agent-store') as typeof import('../../store/agent-store');
      const { gatewayConfigFromEnv } = require('../gateway/server') as typeof import('../gateway/server');
      (require('./cli-runtime') as typeof import('./cli-runtime')).installCliRuntime();
      const gatewayPort = gatewayConfigFromEnv().port; // a bad DREACT_GATEWAY_* setting: said before anything starts
      const stack = await startEmbeddedStack({
        publish: true,
        temporal: cliTemporalConnection(),
        log: (l) => console.error(l),
      });
      console.log(`Temporal:    ${stack.info.temporalAddress}`);
      if (stack.info.uiUrl) console.log(`Temporal UI: ${stack.info.uiUrl}`);
      console.log(`Postgres:    ${stack.info.databaseUrl}${stack.info.pglite ? ' (PGlite)' : ''}`);
      console.log(`State:       ${stackHome()}`);
      const agents = (await listCurrentAgents(stack.db.pool)).map((a) => a.name);
      for (const line of devNextSteps({ agents, gatewayPort })) console.log(line);
      console.log('Ready. Ctrl-C stops the stack.');
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      console.error('[dev] stopping…');
      await stack.stop();
    });
}
