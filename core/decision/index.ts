/**
 * The decision protocol: wire schema, system prompt, validation → notices, multi-action
 * strategy matrix and the retry policy. Pure; safe for workflows.
 */
export * from './schema';
export * from './notice';
export * from './validate';
export * from './multi-action';
export * from './retry';
export * from './prompt';
export * from './interpret';
