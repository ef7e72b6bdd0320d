/**
 * Iteration budget of a turn: a base number of decision rounds, plus one reactive bonus round
 * per followup (capped at the base); a steer earns none. Pure and deterministic.
 */
export interface IterationSnapshot {
  /** Rounds consumed so far (the current round's 1-based index once consumed). */
  index: number;
  /** Base + bonus. */
  max: number;
  base: number;
  bonus: number;
}

export class IterationBudget {
  private usedRounds = 0;
  private bonusRounds = 0;

  private baseRounds: number;

  constructor(base: number) {
    this.baseRounds = IterationBudget.check(base);
  }

  private static check(base: number): number {
    if (!Number.isInteger(base) || base < 1) throw new Error(`max iterations must be a positive integer, got ${base}`);
    return base;
  }

  get base(): number {
    return this.baseRounds;
  }

  /** Sets the base once it is resolved (turn input → worker config → env → default); bonus stays capped at the base. */
  rebase(base: number): void {
    this.baseRounds = IterationBudget.check(base);
    this.bonusRounds = Math.min(this.bonusRounds, this.baseRounds);
  }

  get used(): number {
    return this.usedRounds;
  }
  get bonus(): number {
    return this.bonusRounds;
  }
  get max(): number {
    return this.base + this.bonusRounds;
  }
  get exhausted(): boolean {
    return this.usedRounds >= this.max;
  }

  /** A followup grants one reactive iteration, never more than the base in total. */
  grantFollowup(): void {
    if (this.bonusRounds < this.base) this.bonusRounds += 1;
  }

  consume(): void {
    if (this.exhausted) throw new Error('iteration budget exhausted');
    this.usedRounds += 1;
  }

  snapshot(): IterationSnapshot {
    return { index: this.usedRounds, max: this.max, base: this.base, bonus: this.bonusRounds };
  }
}
