/** Built-in scripts of the scripted model (demo and smoke tests). */
import type { z } from 'zod';
import type { ScriptSpecSchema } from '../../core/model/config';

type ScriptInput = z.input<typeof ScriptSpecSchema>;

const thinking = (t: string) => `<channel:thinking>${t}</channel:thinking>`;
const decision = (obj: unknown) =>
  `<channel:ReactDecisionOutV2>\`\`\`json\n${JSON.stringify(obj)}\n\`\`\`</channel:ReactDecisionOutV2>`;

/** The program of the demo's exec turn: writes OUTPUT_DIR/squares.csv. */
const DEMO_EXEC_CODE = `
import csv, os

path = os.path.join(os.environ["OUTPUT_DIR"], "squares.csv")
with open(path, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["n", "square", "cube"])
    for n in range(1, 6):
        w.writerow([n, n * n, n ** 3])
print("wrote squares.csv: 5 rows")
`;

export const BUILTIN_SCRIPTS: Record<string, ScriptInput> = {
  /** Two tool rounds (write a note, read it back), then a streamed answer. */
  demo: {
    structured: { conversation_title: { title: 'Plan note check' } },
    chunkSize: 12,
    latencyMs: 15,
    rounds: [
      thinking('I will keep a short note of the plan in the turn workspace.') +
        decision({
          action: 'call_tool',
          notes: 'write the plan note',
          tool_call: {
            tool_id: 'react.write',
            params: {
              path: 'notes.md',
              channel: 'internal',
              content: '# Plan\n1. Write this note\n2. Read it back\n3. Answer\n',
              kind: 'file',
            },
          },
        }),
      thinking('Reading the note back to check it was stored.') +
        decision({
          action: 'call_tool',
          notes: 'read the note back',
          tool_call: { tool_id: 'react.read', params: { paths: ['fi:{{turn}}.files/notes.md'] } },
        }),
      thinking('The note is stored; I can answer now.') +
        decision({ action: 'complete', notes: 'answer', suggested_followups: ['What else can you do?'] }) +
        '<channel:answer>I wrote a plan note to `files/notes.md`, read it back, and everything checks out. Round {{round}} is the last one.</channel:answer>',
    ],
  },
  /** Demo turn 1: a plan note, a read-back, then an answer that picks up a followup. */
  'demo-trip': {
    structured: { conversation_title: { title: 'A weekend in Lisbon' } },
    chunkSize: 10,
    latencyMs: 25,
    rounds: [
      thinking(
        'A weekend in Lisbon: first I will jot down a short plan in the turn workspace so I can check it before answering.',
      ) +
        decision({
          action: 'call_tool',
          notes: 'write the plan note',
          tool_call: {
            tool_id: 'react.write',
            params: {
              path: 'trip.md',
              channel: 'internal',
              content: '# Lisbon weekend\n1. Saturday: Alfama and the castle\n2. Sunday: Belém and pastéis\n',
              kind: 'file',
            },
          },
        }),
      thinking('Reading the note back to make sure it was stored before I rely on it.') +
        decision({
          action: 'call_tool',
          notes: 'read the plan back',
          tool_call: { tool_id: 'react.read', params: { paths: ['fi:{{turn}}.files/trip.md'] } },
        }),
      thinking('The plan is stored. I will answer and take the latest followup into account.') +
        decision({
          action: 'complete',
          notes: 'answer with the plan',
          suggested_followups: ['Book a table for Saturday?'],
        }) +
        '<channel:answer>Here is your Lisbon weekend: **Saturday** Alfama and the castle, **Sunday** Belém and pastéis de nata. The plan is saved in `files/trip.md`. You also asked: _{{event}}_ — noted and folded into this turn.</channel:answer>',
    ],
  },
  /** Demo turn 2: a long, slow round meant to be steered. */
  'demo-steer': {
    structured: {},
    chunkSize: 6,
    latencyMs: 40,
    rounds: [
      thinking(
        'Let me think through every neighbourhood in detail: Alfama, Baixa, Chiado, Bairro Alto, Príncipe Real, Belém, Parque das Nações, Campo de Ourique, Graça, Mouraria… '.repeat(
          3,
        ),
      ) + decision({ action: 'complete', notes: '', final_answer: 'A very long guide.' }),
    ],
    finalize:
      thinking('The user steered: stop and summarise.') +
      decision({ action: 'complete', notes: 'finalize after steer' }) +
      '<channel:answer>Stopped as you asked ({{event}}). Short version: Alfama for views, Belém for history, Bairro Alto for the evening.</channel:answer>',
  },
  /**
   * Demo turn 3: runs a small Python program in the sandbox (exec.python, one contracted output
   * file), reads the file back with react.read, then answers. Without a sandbox the exec call's
   * observation says what to install, and the read finds nothing.
   */
  'demo-exec': {
    structured: {},
    chunkSize: 12,
    latencyMs: 15,
    rounds: [
      thinking('A small table is quickest to compute: I will run a Python program that writes it as a CSV file.') +
        decision({
          action: 'call_tool',
          notes: 'compute the table in the sandbox',
          tool_call: {
            tool_id: 'exec.python',
            params: {
              contract: [
                {
                  filename: 'squares.csv',
                  description: 'n, n squared and n cubed for n = 1..5',
                  visibility: 'external',
                },
              ],
              timeout_s: 30,
            },
          },
        }) +
        `<channel:code>${DEMO_EXEC_CODE}</channel:code>`,
      thinking('Reading the output file back before I report it.') +
        decision({
          action: 'call_tool',
          notes: 'read the output back',
          tool_call: { tool_id: 'react.read', params: { paths: ['fi:{{turn}}.outputs/squares.csv'] } },
        }),
      thinking('Both tool results are in; I can report them.') +
        decision({ action: 'complete', notes: 'answer' }) +
        '<channel:answer>I asked the sandbox to run a small Python program that writes `outputs/squares.csv` (n, n², n³ for n = 1..5), then read that file back: the two tool results above show what came out.</channel:answer>',
    ],
  },
  /** Answers immediately. */
  echo: {
    structured: {},
    rounds: [
      thinking('Simple question; answering directly.') +
        decision({ action: 'complete', notes: '', final_answer: 'Done: {{event}}' }),
    ],
  },
};
