// Lint: typescript-eslint recommended everywhere, the layer order (layers/order), plus the determinism
// rules for workflows/ (no I/O, no wall clock or randomness, no pg / provider SDK / node: imports).
import path from 'node:path';
import tseslint from 'typescript-eslint';

export const workflowDeterminismRules = {
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        { group: ['node:*'], message: 'workflows/ must be deterministic: no node: modules.' },
        {
          group: [
            'fs',
            'fs/*',
            'path',
            'os',
            'crypto',
            'child_process',
            'http',
            'https',
            'net',
            'dns',
            'worker_threads',
            'timers',
            'timers/*',
          ],
          message: 'workflows/ must be deterministic: no Node built-ins.',
        },
        {
          group: [
            'pg',
            'pg-*',
            '@anthropic-ai/*',
            '@aws-sdk/*',
            '@electric-sql/*',
            '@temporalio/client',
            '@temporalio/worker',
            '@temporalio/activity',
            '**/activities/*',
            '!**/activities/turn-activities',
            '**/store/*',
          ],
          message:
            'workflows/ must not import I/O libraries or activity code (type-only imports of activity signatures are allowed).',
          allowTypeImports: true,
        },
      ],
    },
  ],
  'no-restricted-properties': [
    'error',
    {
      object: 'Date',
      property: 'now',
      message: 'Use workflow time (the Temporal workflow API) — not Date.now — in workflows/.',
    },
    {
      object: 'Math',
      property: 'random',
      message: 'Use uuid4() from @temporalio/workflow — not Math.random — in workflows/.',
    },
    { object: 'process', message: 'No process access in workflows/.' },
  ],
  'no-restricted-globals': [
    'error',
    { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
    { name: 'setInterval', message: 'Use sleep() / timers from @temporalio/workflow.' },
    { name: 'setImmediate', message: 'Use the workflow API.' },
    { name: 'fetch', message: 'No I/O in workflows/: call an activity.' },
    { name: 'performance', message: 'No wall clock in workflows/.' },
    { name: 'crypto', message: 'No randomness in workflows/: use uuid4().' },
  ],
  'no-restricted-syntax': [
    'error',
    {
      selector: "NewExpression[callee.name='Date'][arguments.length=0]",
      message: 'new Date() reads the wall clock: pass time in, or use workflow time.',
    },
  ],
};

// The data layer: only store/ writes SQL or uses pg at runtime (elsewhere: named store functions,
// type-only pg imports); client/ and apps/ never import activities/ at runtime (it shares core/ and store/ instead).
const SQL_START = '/^\\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH|CREATE|ALTER|DROP|BEGIN|COMMIT|ROLLBACK)\\b/';
const SQL_MESSAGE = 'SQL belongs in store/: put the statement behind a named store function.';
const PG_IMPORT = {
  group: ['pg', 'pg-*'],
  message: 'Only store/ uses pg at runtime: call a named store function.',
  allowTypeImports: true,
};
export const dataLayerRules = (restricted = []) => ({
  'no-restricted-imports': ['error', { patterns: [PG_IMPORT, ...restricted] }],
  'no-restricted-syntax': [
    'error',
    { selector: `Literal[value=${SQL_START}]`, message: SQL_MESSAGE },
    { selector: `TemplateLiteral > TemplateElement:first-child[value.raw=${SQL_START}]`, message: SQL_MESSAGE },
  ],
});

// The layer order (docs/CONVENTIONS.md: Layout): a file may import its own folder and the folders
// below it, never one above or beside it — type-only imports included. `workers/` hosts the
// workflows it bundles, so it may import `workflows/`. `store/` is SQL only: no Temporal.
export const LAYERS = {
  core: 0,
  store: 1,
  contract: 2,
  client: 3,
  activities: 4,
  workflows: 5,
  workers: 5,
  apps: 6,
};
const LAYER_ORDER = 'core < store < contract < client < activities < workflows, workers < apps';
const SIDEWAYS_ALLOWED = { workers: ['workflows'] };
const FORBIDDEN_PACKAGES = {
  store: [
    { pattern: /^@temporalio\//, message: 'store/ is SQL only: talk to Temporal from client/ (or an activity).' },
  ],
};

const layerOf = (root, file) => {
  const rel = path.relative(root, file).split(path.sep);
  return rel[0] !== '..' && rel.length > 1 && rel[0] in LAYERS ? rel[0] : undefined;
};

export const layerOrderRule = {
  meta: {
    type: 'problem',
    docs: { description: `imports follow the layer order ${LAYER_ORDER}` },
    schema: [],
  },
  create(context) {
    const root = context.cwd;
    const file = context.filename;
    const from = layerOf(root, file);
    if (!from) return {};
    const check = (node, spec) => {
      if (typeof spec !== 'string') return;
      if (!spec.startsWith('.')) {
        for (const { pattern, message } of FORBIDDEN_PACKAGES[from] ?? [])
          if (pattern.test(spec)) context.report({ node, message: `${message} (import of ${spec})` });
        return;
      }
      const to = layerOf(root, path.resolve(path.dirname(file), spec));
      if (!to || to === from) return;
      if (LAYERS[to] < LAYERS[from] || SIDEWAYS_ALLOWED[from]?.includes(to)) return;
      context.report({
        node,
        message: `${from}/ may not import ${to}/ (${spec}): imports run down the layers ${LAYER_ORDER}, type-only ones too.`,
      });
    };
    const source = (node) => node.source && check(node.source, node.source.value);
    return {
      ImportDeclaration: source,
      ExportNamedDeclaration: source,
      ExportAllDeclaration: source,
      ImportExpression: (node) => node.source.type === 'Literal' && check(node.source, node.source.value),
      TSImportType: (node) => {
        const arg = node.argument?.literal ?? node.argument;
        if (arg?.type === 'Literal') check(arg, arg.value);
      },
      TSExternalModuleReference: (node) => node.expression.type === 'Literal' && check(node, node.expression.value),
      CallExpression: (node) => {
        if (
          node.callee.type === 'Identifier' &&
          node.callee.name === 'require' &&
          node.arguments[0]?.type === 'Literal'
        )
          check(node.arguments[0], node.arguments[0].value);
      },
    };
  },
};
const layersPlugin = { rules: { order: layerOrderRule } };

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'apps/web/dist/**',
      '.dreact/**',
      'scratch/**',
      'test/fixtures/**',
      'bin/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: Object.keys(LAYERS).map((layer) => `${layer}/**/*.{ts,tsx,mts,cts,js,mjs,cjs}`),
    plugins: { layers: layersPlugin },
    rules: { 'layers/order': 'error' },
  },
  { files: ['workflows/**/*.ts', 'core/**/*.ts'], rules: workflowDeterminismRules },
  { files: ['activities/**/*.ts', 'workers/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'], rules: dataLayerRules() },
  {
    files: ['client/**/*.ts', 'apps/**/*.ts'],
    rules: dataLayerRules([
      {
        group: ['**/activities', '**/activities/*', '**/activities/**'],
        message: 'client/ and apps/ must not import activities/ at runtime: share the code through core/ or store/.',
        allowTypeImports: true,
      },
    ]),
  },
);
