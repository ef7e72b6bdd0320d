/**
 * Every `dreact …` command in the docs' shell blocks parses with the CLI's own program (commander:
 * the commands, options, arguments and their value checks), so a doc that drifts from the CLI
 * fails here. Synopses are read as written: `<x>` and UPPERCASE are placeholders, `[…]` optional
 * (checked without and with every optional part), `a|b` alternatives (each checked).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Command, CommanderError } from 'commander';
import { buildProgram } from '../../../apps/cli/main';
import { docCommands, docInlineCommands, shellWords } from '../../support/doc-blocks';

/** The program with every action replaced by a no-op and errors thrown instead of exiting. */
function parsingOnly(): Command {
  const program = buildProgram();
  const quiet = (cmd: Command) => {
    cmd.exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
    if ((cmd as unknown as { _actionHandler?: unknown })._actionHandler) cmd.action(() => {});
    cmd.commands.forEach(quiet);
  };
  quiet(program);
  return program;
}

const isAlternatives = (w: string) => w.includes('|') && !/^[a-z]+:\/\//.test(w) && !/^[{[(]/.test(w);
/** `<name>` and UPPERCASE placeholders take a value every option accepts (a number is a string too). */
const placeholder = (w: string) => (/^<[^>]+>$/.test(w) || /^[A-Z][A-Z0-9_]*…?$/.test(w) ? '1' : w);

/** Inline code names a command and its options; the arguments it leaves out are the prose's to give. */
const INLINE_TOLERATED = new Set(['commander.missingArgument', 'commander.missingMandatoryOptionValue']);

/** The concrete command lines a synopsis stands for. */
export function expandSynopsis(argv: readonly string[]): string[][] {
  // Optional groups: [--flag VALUE] spanning words.
  const parts: Array<{ words: string[]; optional: boolean }> = [];
  let group: string[] | undefined;
  for (const w of argv) {
    if (!group && w.startsWith('[') && !w.startsWith('[{')) {
      group = [];
      const inner = w.slice(1);
      if (inner.endsWith(']')) {
        parts.push({ words: [inner.slice(0, -1)].filter(Boolean), optional: true });
        group = undefined;
      } else if (inner) group.push(inner);
    } else if (group) {
      if (w.endsWith(']')) {
        if (w.length > 1) group.push(w.slice(0, -1));
        parts.push({ words: group, optional: true });
        group = undefined;
      } else group.push(w);
    } else parts.push({ words: [w], optional: false });
  }
  if (group) throw new Error(`unclosed [ in: ${argv.join(' ')}`);
  const lines: string[][] = [];
  for (const withOptional of [false, true]) {
    const words = parts.filter((p) => withOptional || !p.optional).flatMap((p) => p.words);
    // Each word with alternatives is varied on its own; the others take their first alternative.
    const first = words.map((w) => (isAlternatives(w) ? w.split('|')[0]! : w));
    lines.push(first);
    words.forEach((w, i) => {
      if (!isAlternatives(w)) return;
      for (const alt of w.split('|').slice(1)) lines.push(first.map((x, j) => (j === i ? alt : x)));
    });
  }
  const seen = new Set<string>();
  return lines
    .map((l) => l.map(placeholder))
    .filter((l) => {
      const key = JSON.stringify(l);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

test('the docs name dreact commands in their shell blocks (the extraction finds them)', () => {
  const commands = docCommands();
  assert.ok(commands.length >= 30, `found ${commands.length}`);
  assert.ok(commands.some((c) => c.where.startsWith('README.md') && c.argv[0] === 'turn'));
  assert.ok(commands.some((c) => c.where.startsWith('docs/evals.md') && c.argv[0] === 'eval'));
});

test('synopses expand to their concrete lines', () => {
  assert.deepEqual(expandSynopsis(shellWords('timeline <conversationId> [--json] [--debug]')), [
    ['timeline', '1'],
    ['timeline', '1', '--json', '--debug'],
  ]);
  assert.deepEqual(expandSynopsis(shellWords('turn "Plan" [--provider scripted|anthropic]')), [
    ['turn', 'Plan'],
    ['turn', 'Plan', '--provider', 'scripted'],
    ['turn', 'Plan', '--provider', 'anthropic'],
  ]);
});

test('a command line the CLI does not know fails this check (the check can fail)', async () => {
  await assert.rejects(
    parsingOnly().parseAsync(['node', 'dreact', 'timeline', 'c1', '--no-such-flag']),
    CommanderError,
  );
  await assert.rejects(parsingOnly().parseAsync(['node', 'dreact', 'no-such-command']), CommanderError);
});

test('every dreact command in README.md and docs/ (blocks and inline code) parses with the CLI', async () => {
  const failures: string[] = [];
  const all = [
    ...docCommands().map((c) => ({ ...c, inline: false })),
    ...docInlineCommands().map((c) => ({ ...c, inline: true })),
  ];
  for (const c of all) {
    for (const argv of expandSynopsis(c.argv)) {
      try {
        await parsingOnly().parseAsync(['node', 'dreact', ...argv]);
      } catch (err) {
        if (c.inline && err instanceof CommanderError && INLINE_TOLERATED.has(err.code)) continue;
        const message = err instanceof CommanderError ? err.message : String(err);
        failures.push(`${c.where}: \`${c.text}\` as \`dreact ${argv.join(' ')}\`: ${message}`);
      }
    }
  }
  assert.deepEqual(failures, []);
});
