/**
 * The JSON schemas kubeconform checks the Helm chart's rendered objects against, committed in
 * deploy/helm/schemas/ (no schema registry is reachable from here or from CI):
 *   - the Kubernetes kinds the chart renders: fields and types from client-go's typed schema
 *     (k8s.io/client-go, in the Go module cache once Helm is installed), required fields from an
 *     OpenAPI v2 document (the swagger.json k8s.io/cli-runtime ships beside it);
 *   - KEDA's ScaledObject and TriggerAuthentication, from KEDA's CRDs (config/crd/bases/*.yaml).
 * Strict, as kubeconform's own "-strict" schemas: an object with declared properties accepts no
 * other (unless the schema preserves unknown fields); a Quantity is a string or a number, an
 * int-or-string a string or an integer. File names follow the schema location
 * `{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json` (SCHEMA_LOCATION).
 *
 *   node --import tsx scripts/k8s-schemas.ts --client-go <…>/applyconfigurations/internal/internal.go \
 *     --swagger <swagger.json> --crd keda.sh_scaledobjects.yaml --crd keda.sh_triggerauthentications.yaml
 * (deploy/helm/schemas/ was generated from client-go v0.37.0, cli-runtime v0.37.0 and KEDA v2.20.2.)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export const SCHEMA_DIR = join(__dirname, '..', 'deploy', 'helm', 'schemas');
export const SCHEMA_LOCATION = join(SCHEMA_DIR, '{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json');

/** The Kubernetes kinds the chart renders: swagger definition → (group, version, kind). */
export const CORE_KINDS: Record<string, [string, string, string]> = {
  'io.k8s.api.apps.v1.Deployment': ['apps', 'v1', 'Deployment'],
  'io.k8s.api.core.v1.Service': ['', 'v1', 'Service'],
  'io.k8s.api.core.v1.ServiceAccount': ['', 'v1', 'ServiceAccount'],
  'io.k8s.api.core.v1.ConfigMap': ['', 'v1', 'ConfigMap'],
  'io.k8s.api.batch.v1.Job': ['batch', 'v1', 'Job'],
  'io.k8s.api.policy.v1.PodDisruptionBudget': ['policy', 'v1', 'PodDisruptionBudget'],
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler': ['autoscaling', 'v2', 'HorizontalPodAutoscaler'],
  'io.k8s.api.networking.v1.Ingress': ['networking.k8s.io', 'v1', 'Ingress'],
};

type Schema = Record<string, unknown>;

// kubeconform's .Group of a core kind (apiVersion v1) is the version itself.
const fileName = (group: string, version: string, kind: string) =>
  `${kind.toLowerCase()}-${group || version}-${version}.json`;

/** Strict and YAML-friendly, recursively (a copy). */
export function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (node === null || typeof node !== 'object') return node;
  const s = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, strict(v)])) as Schema;
  if (s['x-kubernetes-int-or-string'] === true || s.format === 'int-or-string') {
    delete s.type;
    delete s.format;
    if (!s.anyOf) s.anyOf = [{ type: 'string' }, { type: 'integer' }];
  }
  const props = s.properties;
  if (
    props &&
    typeof props === 'object' &&
    s.additionalProperties === undefined &&
    s['x-kubernetes-preserve-unknown-fields'] !== true
  )
    s.additionalProperties = false;
  return s;
}

/** The definitions `root` reaches through $ref (`#/definitions/<name>`). */
function reachable(definitions: Record<string, Schema>, root: string): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  const visit = (name: string) => {
    if (out[name] || !definitions[name]) return;
    out[name] = definitions[name];
    const refs = JSON.stringify(definitions[name]).matchAll(/"\$ref":"#\/definitions\/([^"]+)"/g);
    for (const [, ref] of refs) visit(ref!);
  };
  visit(root);
  return out;
}

/** A type of the structured-merge-diff schema client-go ships (applyconfigurations/internal). */
interface SmdType {
  scalar?: 'string' | 'numeric' | 'boolean' | 'untyped';
  namedType?: string;
  list?: { elementType: SmdType };
  map?: { fields?: Array<{ name: string; type: SmdType }>; elementType?: SmdType };
}

const SCALARS: Record<string, Schema> = {
  string: { type: 'string' },
  numeric: { type: 'number' },
  boolean: { type: 'boolean' },
  untyped: {},
};

function fromSmd(t: SmdType): Schema {
  if (t.namedType) return { $ref: `#/definitions/${t.namedType}` };
  // A type that may be a scalar, a list or a map (the untyped ones) accepts anything.
  if ([t.scalar, t.list, t.map].filter(Boolean).length > 1) return {};
  if (t.scalar) return SCALARS[t.scalar]!;
  if (t.list) return { type: 'array', items: fromSmd(t.list.elementType) };
  if (t.map?.fields)
    return {
      type: 'object',
      properties: Object.fromEntries(t.map.fields.map((f) => [f.name, fromSmd(f.type)])),
      additionalProperties: t.map.elementType ? fromSmd(t.map.elementType) : false,
    };
  if (t.map)
    return { type: 'object', ...(t.map.elementType ? { additionalProperties: fromSmd(t.map.elementType) } : {}) };
  return {};
}

/**
 * One strict schema per core kind: the fields and their types from client-go's typed schema (the
 * `schemaYAML` of k8s.io/client-go/applyconfigurations/internal/internal.go, current with its
 * release), the required fields from an OpenAPI v2 document where it names them.
 */
export function coreSchemas(
  smdGoSource: string,
  swagger?: { definitions: Record<string, Schema> },
): Map<string, Schema> {
  const yamlText = /schemaYAML = typed\.YAMLObject\(`([\s\S]*?)`\)/.exec(smdGoSource)?.[1];
  if (!yamlText) throw new Error('no schemaYAML in the client-go source given');
  const types = (parse(yamlText) as { types: Array<SmdType & { name: string }> }).types;
  const defs: Record<string, Schema> = {};
  for (const { name, ...t } of types) {
    const schema = fromSmd(t);
    const required = (swagger?.definitions[name]?.required as string[] | undefined)?.filter(
      (r) => (schema.properties as Schema | undefined)?.[r] !== undefined,
    );
    defs[name] = required?.length ? { ...schema, required } : schema;
  }
  // Quantities ("500m", 1, "1Gi") and int-or-strings, as YAML writes them.
  defs['io.k8s.apimachinery.pkg.api.resource.Quantity'] = { anyOf: [{ type: 'string' }, { type: 'number' }] };
  defs['io.k8s.apimachinery.pkg.util.intstr.IntOrString'] = { anyOf: [{ type: 'string' }, { type: 'integer' }] };
  const out = new Map<string, Schema>();
  for (const [name, [group, version, kind]] of Object.entries(CORE_KINDS)) {
    if (!defs[name]) throw new Error(`client-go's schema has no type ${name}`);
    const definitions = reachable(defs, name);
    out.set(fileName(group, version, kind), { ...definitions[name], definitions });
  }
  return out;
}

/** One schema per served version of each CRD. */
export function crdSchemas(crdYaml: string): Map<string, Schema> {
  const out = new Map<string, Schema>();
  for (const doc of parseAllDocuments(crdYaml)) {
    const crd = doc.toJS() as {
      kind?: string;
      spec?: {
        group: string;
        names: { kind: string };
        versions: Array<{ name: string; served: boolean; schema?: { openAPIV3Schema: Schema } }>;
      };
    } | null;
    if (crd?.kind !== 'CustomResourceDefinition' || !crd.spec) continue;
    for (const v of crd.spec.versions) {
      if (!v.served || !v.schema) continue;
      out.set(fileName(crd.spec.group, v.name, crd.spec.names.kind), strict(v.schema.openAPIV3Schema) as Schema);
    }
  }
  return out;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const value = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  const smd = value('--client-go');
  const swagger = value('--swagger');
  const crds = args.flatMap((a, i) => (a === '--crd' ? [args[i + 1]!] : []));
  if (!smd || crds.length === 0) {
    console.error(
      'usage: scripts/k8s-schemas.ts --client-go <client-go>/applyconfigurations/internal/internal.go ' +
        '[--swagger <swagger.json>] --crd <crd.yaml> [--crd …]',
    );
    process.exit(2);
  }
  mkdirSync(SCHEMA_DIR, { recursive: true });
  const all = new Map([
    ...coreSchemas(
      readFileSync(smd, 'utf8'),
      swagger ? (JSON.parse(readFileSync(swagger, 'utf8')) as { definitions: Record<string, Schema> }) : undefined,
    ),
    ...crds.flatMap((f) => [...crdSchemas(readFileSync(f, 'utf8'))]),
  ]);
  for (const [file, schema] of all) writeFileSync(join(SCHEMA_DIR, file), `${JSON.stringify(schema)}\n`);
  console.log(`${all.size} schemas in ${SCHEMA_DIR}: ${[...all.keys()].join(', ')}`);
}
