/**
 * `dreact` — the durable-react CLI (argument parsing with commander).
 */
import { Command, InvalidArgumentError } from 'commander';
import { PROVIDER_IDS } from '../../core/model/abilities';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { eventCommand, historyCommand, timelineCommand, turnsCommand, turnCommand } from './commands';
import { startEmbeddedStack, stackHome } from '../stack/embedded';
import { DreactError } from '../../client/api';
import { gatewayCommand } from './gateway-command';
import { offsetArg, tailCommand } from './tail';
import { registerDeployCommands } from './deploy-command';
import { registerGcCommand } from './gc-command';
import { registerKeysCommands } from './keys-command';
import { registerAgentCommands } from './agents-command';
import { registerFileCommands } from './files-command';
import { registerEvalCommands } from './eval-command';
import { registerInspectCommand } from './inspect-command';
import { registerForkCommand } from './fork-command';
import { registerApprovalCommands } from './approvals-command';
import { registerPolicyCommands } from './policy-command';
import { registerBudgetCommands } from './budget-command';
import { registerLimitCommands } from './limits-command';
import { registerWorkerCommand } from './worker-command';
import { registerDoctorCommand } from './doctor-command';
import { cliTemporalConnection, useConnectionFlags } from './session';

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

export function buildProgram(): Command {
  const program = new Command('dreact')
    .description('durable-react: a timeline-native ReAct agent runtime on Temporal')
    .showHelpAfterError()
    // The Temporal connection (the `temporal` CLI's flags): each wins over its TEMPORAL_* variable
    // and the temporal.toml profile (client/temporal/connection.ts). No API key flag: it would show in `ps`.
    .option('--address <host:port>', 'Temporal server (else TEMPORAL_ADDRESS, else the profile, else 127.0.0.1:7233)')
    .option('--namespace <name>', 'Temporal namespace (else TEMPORAL_NAMESPACE, else the profile, else default)')
    .option('--profile <name>', 'temporal.toml profile (else TEMPORAL_PROFILE, else default)')
    .option(
      '--config-file <path>',
      'temporal.toml (else TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml)',
    )
    .option('--tls', 'connect with TLS (TEMPORAL_TLS)')
    .option('--tls-cert-path <path>', 'mTLS client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH)')
    .option('--tls-key-path <path>', 'mTLS client key (TEMPORAL_TLS_CLIENT_KEY_PATH)')
    .option('--tls-ca-path <path>', "the server's CA certificate (TEMPORAL_TLS_SERVER_CA_CERT_PATH)")
    .option('--tls-server-name <name>', "the server's TLS name (TEMPORAL_TLS_SERVER_NAME)")
    .hook('preAction', (_program, action) => {
      const o = action.optsWithGlobals();
      useConnectionFlags({
        configFile: o.configFile,
        profile: o.profile,
        flags: {
          address: o.address,
          namespace: o.namespace,
          tls: o.tls,
          tlsCertPath: o.tlsCertPath,
          tlsKeyPath: o.tlsKeyPath,
          tlsCaPath: o.tlsCaPath,
          tlsServerName: o.tlsServerName,
        },
      });
    });

  program
    .command('dev')
    .description('start the local stack in the foreground (Temporal dev server with UI, Postgres/PGlite, worker)')
    .action(async () => {
      const stack = await startEmbeddedStack({
        publish: true,
        temporal: cliTemporalConnection(),
        log: (l) => console.error(l),
      });
      console.log(`Temporal:    ${stack.info.temporalAddress}`);
      if (stack.info.uiUrl) console.log(`Temporal UI: ${stack.info.uiUrl}`);
      console.log(`Postgres:    ${stack.info.databaseUrl}${stack.info.pglite ? ' (PGlite)' : ''}`);
      console.log(`State:       ${stackHome()}`);
      console.log('Ready. Ctrl-C stops the stack.');
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      console.error('[dev] stopping…');
      await stack.stop();
    });

  program
    .command('turn')
    .description('start a turn, stream it live and print the answer')
    .argument('<prompt>', 'the user prompt')
    .option('-c, --conversation <id>', 'continue this conversation (default: a new one)')
    .option(
      '--agent <name|path>',
      "the conversation's agent: a name, or an agent file the embedded worker loads (default: the conversation's, else default)",
    )
    .option('--provider <name>', "scripted | anthropic | openai (default: the agent's model; scripted without --agent)")
    .option('--script <name>', 'scripted model script (demo, echo)')
    .option('--model <id>', 'model id (anthropic, openai)')
    .option('--max-iterations <n>', 'iteration budget of the turn', int)
    .option('--json', 'print one final JSON object on stdout')
    .option(
      '--attach <files...>',
      'attach files (images, PDF, text, CSV, Office documents); checked before anything is stored',
    )
    .action(async (prompt: string, o) => {
      if (o.provider !== undefined && !(PROVIDER_IDS as readonly string[]).includes(o.provider))
        throw new InvalidArgumentError(`unknown provider "${o.provider}" (${PROVIDER_IDS.join(' | ')})`);
      // Without --agent the scripted model stays the default (the README's commands); with one, its model.
      const provider = o.provider ?? (o.agent === undefined ? 'scripted' : undefined);
      await turnCommand(prompt, {
        attach: o.attach,
        conversation: o.conversation,
        agent: o.agent,
        provider,
        script: o.script,
        model: o.model,
        maxIterations: o.maxIterations,
        json: o.json,
      });
    });

  program
    .command('steer')
    .description('steer the running turn of a conversation')
    .argument('<conversationId>')
    .argument('<text>')
    .action((c: string, t: string) => eventCommand('steer', c, t));
  program
    .command('followup')
    .description('send a followup (into the running turn, or as the next turn)')
    .argument('<conversationId>')
    .argument('<text>')
    .action((c: string, t: string) => eventCommand('followup', c, t));

  program
    .command('timeline')
    .description("print a conversation's timeline")
    .argument('<conversationId>')
    .option('--json', 'blocks as JSON')
    .option('--debug', 'the rendered model view with cache checkpoints')
    .action((c: string, o) => timelineCommand(c, o));

  program
    .command('turns')
    .description("a conversation's turns and their status (a failed turn with its error)")
    .argument('<conversationId>')
    .option('--json', 'as JSON')
    .action((c: string, o) => turnsCommand(c, o));

  program
    .command('history')
    .description("the Temporal UI URL and a readable list of a turn's history events")
    .argument('<conversationId>')
    .option('--turn <n>', 'turn index (default: the latest)', int)
    .action((c: string, o) => historyCommand(c, o));

  program
    .command('tail')
    .description("follow a conversation's stream live (all turns)")
    .argument('<conversationId>')
    .option('--after <n>', 'start after this event offset (default 0: from the oldest retained event)', offsetArg)
    .option('--until-done', 'stop after the first turn end it shows')
    .option('--url <gateway>', "follow through a gateway's SSE stream instead of the stack's Postgres")
    .option('--api-key <key>', 'gateway API key (default DREACT_API_KEY)')
    .action((c: string, o) => tailCommand(c, o));

  program
    .command('gateway')
    .description('serve the HTTP gateway (REST + SSE); keys from DREACT_API_KEYS')
    .option('--port <n>', 'listen port (default DREACT_GATEWAY_PORT or 8787)', int)
    .option('--host <host>', 'listen address (default 0.0.0.0, or 127.0.0.1 without keys)')
    .action((o) => gatewayCommand(o));

  registerDeployCommands(program);
  registerGcCommand(program);
  registerKeysCommands(program);
  registerAgentCommands(program);
  registerFileCommands(program);
  registerEvalCommands(program);
  registerInspectCommand(program);
  registerForkCommand(program);
  registerApprovalCommands(program);
  registerPolicyCommands(program);
  registerBudgetCommands(program);
  registerLimitCommands(program);
  registerWorkerCommand(program);
  registerDoctorCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  Runtime.install({ logger: new DefaultLogger((process.env.DREACT_LOG_LEVEL as 'WARN' | undefined) ?? 'WARN') });
  try {
    await buildProgram().parseAsync(argv);
    // A command that reports a failure without throwing (dreact doctor) sets the exit code.
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    const message =
      e instanceof DreactError || e instanceof InvalidArgumentError
        ? e.message
        : e instanceof Error
          ? process.env.DREACT_DEBUG
            ? (e.stack ?? e.message)
            : e.message
          : String(e);
    process.stderr.write(`dreact: ${message}\n`);
    return e instanceof DreactError && e.code === 'bad_input' ? 2 : 1;
  }
}

if (require.main === module) {
  main(process.argv).then((code) => process.exit(code));
}
