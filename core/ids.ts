/**
 * Deterministic ids (pure): FNV-1a 64-bit over UTF-16 code units, hex encoded.
 * Used where a retried activity must derive the same id as the first attempt.
 */
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

export function stableHash(input: string): string {
  let h = FNV_OFFSET;
  for (let i = 0; i < input.length; i++) {
    h ^= BigInt(input.charCodeAt(i));
    h = (h * FNV_PRIME) & MASK;
  }
  return h.toString(16).padStart(16, '0');
}

/** `tc_<12 hex>` call id derived from a stable key (e.g. workflow id + round + action index). */
export function callIdFor(key: string): string {
  return `tc_${stableHash(key).slice(0, 12)}`;
}
