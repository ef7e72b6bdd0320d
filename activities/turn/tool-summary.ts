/** Readable one-line summaries of tool calls for Temporal UI (`tool react.write files/notes.md`). */
export function summarizeToolCall(toolId: string, params: Record<string, unknown>): string {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  let target: string | undefined;
  if (toolId === 'react.write') {
    const path = str(params.path) ?? '';
    target = path.includes('/') || path.includes(':') ? path : `files/${path}`;
  } else if (toolId === 'react.read') {
    const paths = Array.isArray(params.paths) ? params.paths.filter((p): p is string => typeof p === 'string') : [];
    target = paths.length > 2 ? `${paths.slice(0, 2).join(', ')} +${paths.length - 2}` : paths.join(', ');
  } else {
    target = str(params.path) ?? str(params.url) ?? str(params.query) ?? str(params.mode);
  }
  const line = `tool ${toolId}${target ? ` ${target}` : ''}`;
  return line.length > 180 ? `${line.slice(0, 179)}…` : line;
}
