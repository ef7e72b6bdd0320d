/** Tool implementations available to the tool activity, by tool id. */
import type { ToolImpl } from './types';
import { reactReadImpl } from './react-read';
import { reactWriteImpl } from './react-write';

export function builtinTools(extra: ToolImpl[] = []): Map<string, ToolImpl> {
  const all = [reactReadImpl, reactWriteImpl, ...extra];
  return new Map(all.map((t) => [t.id, t]));
}
