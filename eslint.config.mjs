// Lint: typescript-eslint recommended everywhere, plus the determinism rules for workflows/
// (no I/O, no wall clock or randomness, no pg / provider SDK / node: imports).
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
