/** Registry tool ids as provider tool names for native tool calling, and back. */
import type { ToolSpec } from './provider';

const NATIVE_NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;

/** Registry tool ids ↔ provider tool names (`react.write` ↔ `react_write`); collisions are errors. */
export class NativeToolNames {
  private readonly toName = new Map<string, string>();
  private readonly toId = new Map<string, string>();

  constructor(ids: readonly string[]) {
    for (const id of ids) {
      const name = id.replace(/\./g, '_');
      if (!NATIVE_NAME_RE.test(name))
        throw new Error(
          `native tools: tool id ${JSON.stringify(id)} does not map to a valid provider tool name (${JSON.stringify(name)})`,
        );
      const taken = this.toId.get(name);
      if (taken !== undefined)
        throw new Error(
          `native tools: tool ids ${JSON.stringify(taken)} and ${JSON.stringify(id)} both map to the provider name ${JSON.stringify(name)}`,
        );
      this.toName.set(id, name);
      this.toId.set(name, id);
    }
  }

  /** Provider name of a registry id, or undefined for an unknown id. */
  nameOf(id: string): string | undefined {
    return this.toName.get(id);
  }

  /** Registry id of a provider name, or undefined for a name the model made up. */
  idOf(name: string): string | undefined {
    return this.toId.get(name);
  }

  /** The registry's specs under their provider names (descriptions name the registry id too). */
  specs(specs: readonly ToolSpec[]): ToolSpec[] {
    return specs.map((s) => {
      const name = this.nameOf(s.name);
      if (name === undefined) throw new Error(`native tools: spec ${JSON.stringify(s.name)} is not a known tool id`);
      return { ...s, name, description: name === s.name ? s.description : `(${s.name}) ${s.description}` };
    });
  }
}
