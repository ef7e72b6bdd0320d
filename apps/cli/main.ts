/**
 * `dreact` — the durable-react CLI (argument parsing with commander).
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { PROVIDER_IDS } from '../../core/model/abilities';
import { projectFile } from '../../store/project-files';
import { offsetArg } from './offset-arg';
import { registerDeployCommands } from './deploy-command';
import { registerGcCommand } from './gc-command';
import { registerKeysCommands } from './keys-command';
import { registerHooksCommands } from './hooks-command';
import { registerMcpCommands } from './mcp-command';
import { registerAgentCommands } from './agents-command';
import { registerFileCommands } from './files-command';
import { registerEvalCommands } from './eval-command';
import { registerInspectCommand } from './inspect-command';
import { registerForkCommand } from './fork-command';
import { registerApprovalCommands } from './approvals-command';
import { registerTaskCommands } from './tasks-command';
import { registerCancelCommand } from './cancel-command';
import { registerPolicyCommands } from './policy-command';
import { registerBudgetCommands } from './budget-command';
import { registerLimitCommands } from './limits-command';
import { registerScheduleCommands } from './schedules-command';
import { registerWorkerCommand } from './worker-command';
import { registerDoctorCommand } from './doctor-command';
import { registerDevCommand } from './dev-command';
import { useConnectionFlags } from './cli-connection';
import { cliErrorLine } from './error-line';
import { exitQuietlyOnClosedPipe } from './closed-pipe';

// The commands' implementations load when a command runs (`dreact --help` starts without them).
const commands = () => require('./commands') as typeof import('./commands');

/** durable-react's version (package.json, beside the sources or the installed package). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(projectFile('package.json'), 'utf8')) as { version: string }).version;
}

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

export function buildProgram(): Command {
  const program = new Command('dreact')
    .description('durable-react: a timeline-native ReAct agent runtime on Temporal')
    .version(packageVersion(), '-V, --version', 'print the version')
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

  registerDevCommand(program);

  program
    .command('turn')
    .description('start a turn, stream it live and print the answer')
    .argument('<prompt>', 'the user prompt')
    .option('-c, --conversation <id>', 'continue this conversation (default: a new one)')
    .option(
      '--agent <name|path>',
      "the conversation's agent: a name, or an agent file the embedded worker loads (default: the conversation's, else default)",
    )
    .option(
      '--provider <name>',
      "scripted | anthropic | openai (default: the conversation's model, else the agent's, else the deployment's default)",
    )
    .option(
      '--script <name>',
      'the scripted model with this built-in script (demo, echo, …: an unknown name is an error listing them all)',
    )
    .option('--model <id>', 'model id (anthropic, openai)')
    .option('--max-rounds <n>', 'round budget of the turn', int)
    .option('--max-iterations <n>', 'older name of --max-rounds', int)
    .option('--json', 'print one final JSON object on stdout')
    .option(
      '--attach <files...>',
      'attach files (images, PDF, text, CSV, Office documents); checked before anything is stored',
    )
    .action(async (prompt: string, o) => {
      if (o.provider !== undefined && !(PROVIDER_IDS as readonly string[]).includes(o.provider))
        throw new InvalidArgumentError(`unknown provider "${o.provider}" (${PROVIDER_IDS.join(' | ')})`);
      // No --provider: the conversation's model, else the agent's, else the deployment's default
      // (the conversation workflow decides, workflows/conversation.ts). --script asks for the scripted one.
      const provider = o.provider ?? (o.script !== undefined ? 'scripted' : undefined);
      await commands().turnCommand(prompt, {
        attach: o.attach,
        conversation: o.conversation,
        agent: o.agent,
        provider,
        script: o.script,
        model: o.model,
        maxRounds: o.maxRounds ?? o.maxIterations,
        json: o.json,
      });
    });

  program
    .command('steer')
    .description('steer the running turn of a conversation')
    .argument('<conversationId>')
    .argument('<text>')
    .option('--detach', 'running waited subagents go on in the background (their answers arrive as followups)')
    .action(async (c: string, t: string, o: { detach?: boolean }) =>
      commands().eventCommand('steer', c, t, o.detach === true),
    );
  program
    .command('followup')
    .description('send a followup (into the running turn, or as the next turn)')
    .argument('<conversationId>')
    .argument('<text>')
    .action(async (c: string, t: string) => commands().eventCommand('followup', c, t));
  registerCancelCommand(program);

  program
    .command('timeline')
    .description("print a conversation's timeline")
    .argument('<conversationId>')
    .option('--json', 'blocks as JSON')
    .option('--debug', 'the rendered model view with cache checkpoints')
    .action(async (c: string, o) => commands().timelineCommand(c, o));

  program
    .command('turns')
    .description("a conversation's turns and their status (a failed turn with its error)")
    .argument('<conversationId>')
    .option('--json', 'as JSON')
    .action(async (c: string, o) => commands().turnsCommand(c, o));

  program
    .command('history')
    .description("the Temporal UI URL and a readable list of a turn's history events")
    .argument('<conversationId>')
    .option('--turn <n>', 'turn index (default: the latest)', int)
    .action(async (c: string, o) => commands().historyCommand(c, o));

  program
    .command('tail')
    .description("follow a conversation's stream live (all turns)")
    .argument('<conversationId>')
    .option('--after <n>', 'start after this event offset (default 0: from the oldest retained event)', offsetArg)
    .option('--until-done', 'stop after the first turn end it shows')
    .option('--url <gateway>', "follow through a gateway's SSE stream instead of the stack's Postgres")
    .option('--api-key <key>', 'gateway API key (default DREACT_API_KEY)')
    .action(async (c: string, o) => (require('./tail') as typeof import('./tail')).tailCommand(c, o));

  program
    .command('gateway')
    .description(
      'serve the HTTP gateway (REST + SSE + the web chat at /); API keys from `dreact keys create` (Postgres) and DREACT_API_KEYS',
    )
    .option('--port <n>', 'listen port (default DREACT_GATEWAY_PORT or 8787)', int)
    .option('--host <host>', 'listen address (default 0.0.0.0, or 127.0.0.1 without keys)')
    .action(async (o) => (require('./gateway-command') as typeof import('./gateway-command')).gatewayCommand(o));

  registerDeployCommands(program);
  registerGcCommand(program);
  registerKeysCommands(program);
  registerHooksCommands(program);
  registerMcpCommands(program);
  registerAgentCommands(program);
  registerFileCommands(program);
  registerEvalCommands(program);
  registerInspectCommand(program);
  registerForkCommand(program);
  registerApprovalCommands(program);
  registerTaskCommands(program);
  registerPolicyCommands(program);
  registerBudgetCommands(program);
  registerLimitCommands(program);
  registerScheduleCommands(program);
  registerWorkerCommand(program);
  registerDoctorCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  // `dreact tail … | head`: the reader left; stop quietly instead of an EPIPE stack.
  exitQuietlyOnClosedPipe(process.stdout);
  try {
    await buildProgram().parseAsync(argv);
    // A command that reports a failure without throwing (dreact doctor) sets the exit code.
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    process.stderr.write(`dreact: ${e instanceof InvalidArgumentError ? e.message : cliErrorLine(e)}\n`);
    return (e as { code?: unknown }).code === 'bad_input' ? 2 : 1;
  }
}

if (require.main === module) {
  main(process.argv).then((code) => process.exit(code));
}
