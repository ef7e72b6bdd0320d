/**
 * `durable-react/workflows`: the workflow code a worker registers. `createWorker` finds it by
 * itself; a worker a team builds with `Worker.create` directly passes the prebuilt bundle:
 *
 *   Worker.create({ workflowBundle: { codePath: workflowBundlePath }, ... })
 *
 * (`tracedWorkflowBundlePath` with OpenTelemetry's workflow interceptors). The package ships both,
 * built by scripts/build-package.ts against the @temporalio/workflow version it depends on.
 */
export { workflowBundlePath, tracedWorkflowBundlePath } from '../workflow-bundle';
