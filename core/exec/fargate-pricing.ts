/**
 * Fargate usage and cost of one exec (pure).
 *
 * Fargate bills the task's configured vCPU and memory per second, from the start of the image pull
 * until the task stops, with a one-minute minimum (Linux/x86, on demand). Prices are the published
 * us-east-1 on-demand list prices; pass your own for another region or architecture.
 */
export interface FargatePrice {
  /** USD per vCPU-hour. */
  vcpuHour: number;
  /** USD per GB-hour of memory. */
  gbHour: number;
  /** Billing minimum per task, seconds. */
  minimumSeconds: number;
}

export const FARGATE_ON_DEMAND_US_EAST_1: FargatePrice = Object.freeze({
  vcpuHour: 0.04048,
  gbHour: 0.004445,
  minimumSeconds: 60,
});

export interface FargateTaskSize {
  /** ECS CPU units (1024 = 1 vCPU). */
  cpuUnits: number;
  /** Task memory, MiB. */
  memoryMiB: number;
}

export interface FargateUsage {
  /** Billed seconds: the run time rounded up to the second, at least the minimum. */
  billedSeconds: number;
  /** Measured run time, ms (pull start, else start, to stop). */
  wallMs: number;
  vcpuSeconds: number;
  gbSeconds: number;
  costUsd: number;
}

/**
 * Usage of a task that ran from `fromMs` (image pull start, else start) to `toMs` (stop), epoch ms.
 * A task that never got to pull its image has no billable time: all figures zero.
 */
export function fargateUsage(
  size: FargateTaskSize,
  fromMs: number | undefined,
  toMs: number | undefined,
  price: FargatePrice = FARGATE_ON_DEMAND_US_EAST_1,
): FargateUsage {
  if (!(size.cpuUnits > 0) || !(size.memoryMiB > 0))
    throw new Error(
      `fargate task size needs positive cpu units and memory, got cpu=${size.cpuUnits} memory=${size.memoryMiB}`,
    );
  if (fromMs === undefined || toMs === undefined)
    return { billedSeconds: 0, wallMs: 0, vcpuSeconds: 0, gbSeconds: 0, costUsd: 0 };
  if (toMs < fromMs) throw new Error(`fargate task stopped (${toMs}) before it started (${fromMs})`);
  const wallMs = toMs - fromMs;
  const billedSeconds = Math.max(price.minimumSeconds, Math.ceil(wallMs / 1000));
  const vcpu = size.cpuUnits / 1024;
  const gb = size.memoryMiB / 1024;
  const vcpuSeconds = vcpu * billedSeconds;
  const gbSeconds = gb * billedSeconds;
  const costUsd = (vcpuSeconds * price.vcpuHour + gbSeconds * price.gbHour) / 3600;
  return { billedSeconds, wallMs, vcpuSeconds, gbSeconds, costUsd };
}
