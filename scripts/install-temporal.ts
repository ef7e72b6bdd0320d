/** Installs the Temporal CLI when missing (go install …@v1.5.1), printing where it is. */
import { ensureTemporalCli } from '../apps/stack/temporal-cli';

const path = ensureTemporalCli((l) => console.log(l));
console.log(
  path
    ? `temporal CLI: ${path}`
    : 'temporal CLI: none (no Go toolchain) — the Temporal SDK will download one on first use',
);
