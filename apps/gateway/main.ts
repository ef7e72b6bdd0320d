/**
 * The gateway as its own process: `node dist/gateway.cjs` (the image's gateway entry point;
 * compiled by scripts/build-package.ts), the same as `dreact gateway` — configured from the
 * environment (apps/gateway/server.ts: DREACT_GATEWAY_PORT/HOST, DREACT_API_KEYS, …) against
 * TEMPORAL_ADDRESS + DATABASE_URL. Stops on SIGTERM/SIGINT.
 */
import { gatewayCommand } from '../cli/gateway-command';

gatewayCommand({}).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`[gateway] fatal: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
