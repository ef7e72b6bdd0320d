/**
 * Fargate backend configuration (zod, from the environment). The endpoint overrides point the
 * SDKs at the loopback stand-ins in tests; production leaves them unset.
 */
import { z } from 'zod';

const csv = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().min(1)).min(1));

export const FargateConfigSchema = z.object({
  region: z.string().min(1),
  cluster: z.string().min(1),
  taskDefinition: z.string().min(1),
  /** Name of the executor container in the task definition (the overrides target it). */
  containerName: z.string().min(1).default('executor'),
  /** Private subnets (no public IP is assigned) and security groups that allow no egress but S3 (a VPC endpoint). */
  subnets: z.array(z.string().min(1)).min(1),
  securityGroups: z.array(z.string().min(1)).min(1),
  bucket: z.string().min(1),
  /** Key prefix of the exec objects (give the bucket a lifecycle rule that expires it). */
  prefix: z.string().default('dreact-exec/'),
  /** Lifetime of the presigned URLs handed to the task, seconds (S3 allows at most 7 days). */
  urlTtlSeconds: z
    .number()
    .int()
    .min(60)
    .max(604_800)
    .default(6 * 3600),
  ecsEndpoint: z.url().optional(),
  s3Endpoint: z.url().optional(),
  s3ForcePathStyle: z.boolean().default(false),
});
export type FargateConfig = z.infer<typeof FargateConfigSchema>;
export type FargateConfigInput = z.input<typeof FargateConfigSchema>;

/** Reads DREACT_FARGATE_* (region falls back to AWS_REGION); a clear error names what is missing. */
export function fargateConfigFromEnv(env: NodeJS.ProcessEnv = process.env): FargateConfig {
  const raw = {
    region: env.DREACT_FARGATE_REGION ?? env.AWS_REGION,
    cluster: env.DREACT_FARGATE_CLUSTER,
    taskDefinition: env.DREACT_FARGATE_TASK_DEFINITION,
    containerName: env.DREACT_FARGATE_CONTAINER || undefined,
    subnets: env.DREACT_FARGATE_SUBNETS === undefined ? undefined : csv.parse(env.DREACT_FARGATE_SUBNETS),
    securityGroups:
      env.DREACT_FARGATE_SECURITY_GROUPS === undefined ? undefined : csv.parse(env.DREACT_FARGATE_SECURITY_GROUPS),
    bucket: env.DREACT_FARGATE_BUCKET,
    prefix: env.DREACT_FARGATE_PREFIX || undefined,
    urlTtlSeconds: env.DREACT_FARGATE_URL_TTL_SECONDS ? Number(env.DREACT_FARGATE_URL_TTL_SECONDS) : undefined,
    ecsEndpoint: env.DREACT_FARGATE_ECS_ENDPOINT || undefined,
    s3Endpoint: env.DREACT_FARGATE_S3_ENDPOINT || undefined,
    s3ForcePathStyle: env.DREACT_FARGATE_S3_PATH_STYLE === '1' || env.DREACT_FARGATE_S3_PATH_STYLE === 'true',
  };
  const parsed = FargateConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const names: Record<string, string> = {
      region: 'DREACT_FARGATE_REGION (or AWS_REGION)',
      cluster: 'DREACT_FARGATE_CLUSTER',
      taskDefinition: 'DREACT_FARGATE_TASK_DEFINITION',
      subnets: 'DREACT_FARGATE_SUBNETS',
      securityGroups: 'DREACT_FARGATE_SECURITY_GROUPS',
      bucket: 'DREACT_FARGATE_BUCKET',
    };
    const problems = parsed.error.issues.map((i) => `${names[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`);
    throw new Error(`the fargate exec backend is not configured: ${problems.join('; ')}`);
  }
  return parsed.data;
}
