/** The client API's errors, by kind (a module of its own: the CLI throws them without loading Temporal). */
export class DreactError extends Error {
  constructor(
    message: string,
    readonly code: 'bad_input' | 'not_found' | 'no_active_turn' | 'conflict' | 'failed',
  ) {
    super(message);
    this.name = 'DreactError';
  }
}
