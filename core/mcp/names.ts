/**
 * MCP tool names → durable-react tool ids. An MCP tool `create-issue` of server `github` is the
 * tool `mcp.github.create_issue`: tool ids are lowercase segments of `a-z 0-9 _`
 * (core/tools/registry.ts), MCP names may hold capitals, dashes, dots and more. The map is
 * one-to-one per server: names that fold to the same segment get `_2`, `_3`… in the order of their
 * original names (sorted), so the same tool list always maps the same way; a name a server lists
 * later (`add`) never changes the ids given before. Pure.
 */
export const MCP_TOOL_PREFIX = 'mcp';
/** Longest tool id (Anthropic and OpenAI accept tool names of up to 64 characters). */
export const MAX_TOOL_ID_CHARS = 64;

/** The id segment a name folds to (before collisions are resolved). */
export function toolSegment(name: string): string {
  const folded = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_+|_+$/g, '');
  const seg = /^[a-z]/.test(folded) ? folded : `t_${folded || 'tool'}`;
  return seg.slice(0, 64);
}

export const mcpToolId = (server: string, segment: string) => `${MCP_TOOL_PREFIX}.${server}.${segment}`;

/** `{server, segment}` of an `mcp.<server>.<segment>` id, else undefined. */
export function parseMcpToolId(id: string): { server: string; segment: string } | undefined {
  const m = /^mcp\.([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)$/.exec(id);
  return m ? { server: m[1]!, segment: m[2]! } : undefined;
}

export class McpToolNames {
  private readonly idByName = new Map<string, string>();
  private readonly nameById = new Map<string, string>();
  private readonly taken = new Set<string>();

  constructor(
    readonly server: string,
    names: readonly string[],
  ) {
    this.add(names);
  }

  /**
   * Maps names not mapped yet (a tool a server lists after start): the ids already given never
   * change, new names take the next free segment (in the order of their names, sorted).
   */
  add(names: readonly string[]): void {
    // Whole ids stay within 64 characters (providers' tool-name limit once dots become underscores).
    const room = Math.max(8, MAX_TOOL_ID_CHARS - `${MCP_TOOL_PREFIX}.${this.server}.`.length - 3);
    for (const name of [...new Set(names)].sort()) {
      if (this.idByName.has(name)) continue;
      const base = toolSegment(name).slice(0, room).replace(/_+$/, '');
      let seg = base;
      for (let n = 2; this.taken.has(seg); n++) seg = `${base}_${n}`;
      this.taken.add(seg);
      const id = mcpToolId(this.server, seg);
      this.idByName.set(name, id);
      this.nameById.set(id, name);
    }
  }

  /** The tool id of an MCP tool name. */
  id(name: string): string {
    const id = this.idByName.get(name);
    if (!id) throw new Error(`MCP server ${this.server} has no tool ${JSON.stringify(name)}`);
    return id;
  }

  /** The MCP tool name of a tool id (undefined: not one of this server's tools). */
  name(id: string): string | undefined {
    return this.nameById.get(id);
  }

  ids(): string[] {
    return [...this.nameById.keys()];
  }
}
