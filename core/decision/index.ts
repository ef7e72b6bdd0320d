/**
 * The decision protocol: wire schema, system prompt, validation → notices, multi-action
 * strategy matrix. Pure; safe for workflows.
 */
export * from './schema';
export * from './notice';
export * from './validate';
export * from './multi-action';
export * from './prompt';
export * from './interpret';
