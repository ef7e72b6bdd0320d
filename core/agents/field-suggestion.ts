/**
 * "did you mean": the field of the agent schema nearest to an unknown one (`instruction` →
 * `instructions`, `tols` → `tools`), among the fields the object at that path has.
 */
import { editDistance as distance } from '../text/edit-distance';
import { AgentDefinitionSchema } from './definition';

/** A zod schema seen through its `_zod.def` (the parts walked here). */
type Node = unknown;

/** The schema under optional/default/nullable/pipe wrappers. */
function unwrap(s: Node): Node {
  for (let i = 0; s && i < 8; i++) {
    const def = (s as { _zod: { def: { type: string; innerType?: Node; in?: Node; out?: Node } } })._zod.def;
    // A pipe: its input schema, or its output one after a preprocess (`tools: [..]` → `{ allow }`).
    const piped =
      (def.in as { _zod?: { def: { type: string } } } | undefined)?._zod?.def.type === 'transform' ? def.out : def.in;
    const inner = def.innerType ?? (def.type === 'pipe' ? piped : undefined);
    if (!inner) return s;
    s = inner;
  }
  return s;
}

/** The object schemas a node can be (a union's object options). */
function objects(s: Node): Array<Record<string, Node>> {
  const n = unwrap(s) as
    { _zod: { def: { type: string; shape?: Record<string, Node>; options?: Node[] } } } | undefined;
  if (!n) return [];
  if (n._zod.def.shape) return [n._zod.def.shape];
  if (n._zod.def.options) return n._zod.def.options.flatMap(objects);
  return [];
}

function child(s: Node, seg: PropertyKey): Node[] {
  const n = unwrap(s) as { _zod: { def: { type: string; element?: Node; options?: Node[] } } } | undefined;
  if (!n) return [];
  if (typeof seg === 'number') {
    if (n._zod.def.element) return [n._zod.def.element];
    return (n._zod.def.options ?? []).flatMap((o) => child(o, seg));
  }
  return objects(n)
    .map((shape) => shape[String(seg)])
    .filter((x) => x !== undefined);
}

/** The field names the agent schema allows at `path` (an object's keys; [] when it cannot say). */
export function agentFieldsAt(path: ReadonlyArray<PropertyKey>): string[] {
  let nodes: Node[] = [AgentDefinitionSchema];
  for (const seg of path) nodes = nodes.flatMap((n) => child(n, seg));
  return [...new Set(nodes.flatMap(objects).flatMap((shape) => Object.keys(shape)))];
}

/** The nearest allowed field to `key` at `path` (case, `-`/`_` and up to a third of its letters apart). */
export function nearestAgentField(path: ReadonlyArray<PropertyKey>, key: string): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  let best: { field: string; d: number } | undefined;
  for (const field of agentFieldsAt(path)) {
    const d = distance(norm(key), norm(field));
    if (d <= Math.max(1, Math.floor(field.length / 3)) && (!best || d < best.d)) best = { field, d };
  }
  return best?.field;
}
