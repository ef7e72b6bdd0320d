/** Built-in scripts of the scripted model (demo and smoke tests). */
import type { z } from 'zod';
import type { ScriptSpecSchema } from '../../core/turn/contracts';

type ScriptInput = z.input<typeof ScriptSpecSchema>;

const thinking = (t: string) => `<channel:thinking>${t}</channel:thinking>`;
const decision = (obj: unknown) => `<channel:ReactDecisionOutV2>\`\`\`json\n${JSON.stringify(obj)}\n\`\`\`</channel:ReactDecisionOutV2>`;

export const BUILTIN_SCRIPTS: Record<string, ScriptInput> = {
  /** Two tool rounds (write a note, read it back), then a streamed answer. */
  demo: {
    chunkSize: 12,
    latencyMs: 15,
    rounds: [
      thinking('I will keep a short note of the plan in the turn workspace.') +
        decision({ action: 'call_tool', notes: 'write the plan note', tool_call: { tool_id: 'react.write', params: { path: 'notes.md', channel: 'internal', content: '# Plan\n1. Write this note\n2. Read it back\n3. Answer\n', kind: 'file' } } }),
      thinking('Reading the note back to check it was stored.') +
        decision({ action: 'call_tool', notes: 'read the note back', tool_call: { tool_id: 'react.read', params: { paths: ['fi:{{turn}}.files/notes.md'] } } }),
      thinking('The note is stored; I can answer now.') +
        decision({ action: 'complete', notes: 'answer', suggested_followups: ['What else can you do?'] }) +
        '<channel:answer>I wrote a plan note to `files/notes.md`, read it back, and everything checks out. Round {{round}} is the last one.</channel:answer>',
    ],
  },
  /** Answers immediately. */
  echo: {
    rounds: [thinking('Simple question; answering directly.') + decision({ action: 'complete', notes: 'direct answer', final_answer: 'Done: {{event}}' })],
  },
};
