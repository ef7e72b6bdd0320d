/**
 * The worker's price table: DEFAULT_PRICE_TABLE extended by a pricing file, DREACT_PRICING_FILE —
 * JSON (`.json`) or YAML (`.yaml` / `.yml`), an object of `"<provider>:<model>"` →
 * `{inputPerMTok, outputPerMTok, cacheWritePerMTok?, cacheReadPerMTok?}` (USD per million tokens;
 * an unqualified key is an Anthropic model):
 *
 *   openai:llama-3.3-70b: { inputPerMTok: 0.6, outputPerMTok: 0.6 }
 *
 * Read once per process; a missing or malformed file is an Error naming the file and the field
 * (the provider registry reads it when the worker starts, so a bad file stops the start).
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_PRICE_TABLE, parsePriceTable, type PriceTable } from '../../core/model/pricing';

let loaded: { file: string | undefined; table: PriceTable } | undefined;

export function loadPriceFile(file: string): PriceTable {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`pricing file ${file} (DREACT_PRICING_FILE) cannot be read: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new Error(
      `pricing file ${file} is not valid ${/\.ya?ml$/i.test(file) ? 'YAML' : 'JSON'}: ${(err as Error).message}`,
    );
  }
  return parsePriceTable(value, file);
}

/** The price table in force: DEFAULT_PRICE_TABLE, extended by DREACT_PRICING_FILE when set. */
export function activePriceTable(env: NodeJS.ProcessEnv = process.env): PriceTable {
  const file = env.DREACT_PRICING_FILE?.trim() || undefined;
  if (loaded && loaded.file === file) return loaded.table;
  const table = file ? loadPriceFile(file) : DEFAULT_PRICE_TABLE;
  loaded = { file, table };
  return table;
}

/** `openai:gpt-4o-mini` → `openai` (the provider half of a provider instance id). */
export function providerOfId(id: string): string {
  const i = id.indexOf(':');
  return i < 0 ? id : id.slice(0, i);
}
