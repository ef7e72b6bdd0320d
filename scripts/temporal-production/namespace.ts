/**
 * The production cluster's namespace: registered with the project's search attributes (admin
 * token), then probed until a workflow starts there with every search attribute set.
 */
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_KEYS } from '../../contract/definitions';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const SA_TYPE: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  KEYWORD: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  INT: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  TEXT: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  BOOL: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  DOUBLE: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  DATETIME: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KEYWORD_LIST: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

const alreadyExists = (err: unknown) => (err as { code?: number }).code === 6; // gRPC ALREADY_EXISTS

/**
 * Registers the namespace and the project's search attributes (admin token), then waits until a
 * workflow can start there with every search attribute set (the frontend's and history's namespace
 * caches refresh every 2 s): the cluster is ready for a worker when this returns.
 */
export async function registerNamespace(
  options: Pick<ConnectionOptions, 'address' | 'tls' | 'apiKey'>,
  namespace: string,
  log: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + 120_000;
  let connection: Connection | undefined;
  for (;;) {
    try {
      connection ??= await Connection.connect({ ...options, connectTimeout: '5 seconds' });
      await connection.workflowService
        .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('3 days') })
        .catch((err: unknown) => {
          if (!alreadyExists(err)) throw err;
        });
      break;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`registering namespace ${namespace} failed: ${(err as Error).message}`);
      await sleep(500);
    }
  }
  try {
    const searchAttributes = Object.fromEntries(SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, SA_TYPE[k.type]!]));
    for (;;) {
      try {
        await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
        break;
      } catch (err) {
        if (alreadyExists(err)) break;
        if (Date.now() > deadline)
          throw new Error(`adding search attributes to ${namespace} failed: ${(err as Error).message}`);
        await sleep(500);
      }
    }
    log(
      `[temporal-production] namespace ${namespace} with search attributes ${Object.keys(searchAttributes).join(', ')}`,
    );
    // A probe workflow with every search attribute: started (no worker needed) and terminated.
    const { encodeSearchAttribute } = probeEncoding();
    for (let i = 0; ; i++) {
      const workflowId = `dreact-readiness-probe-${Date.now()}-${i}`;
      try {
        await connection.workflowService.startWorkflowExecution({
          namespace,
          workflowId,
          workflowType: { name: 'readinessProbe' },
          taskQueue: { name: 'dreact-readiness-probe' },
          requestId: workflowId,
          searchAttributes: {
            indexedFields: Object.fromEntries(
              SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, encodeSearchAttribute(k.type)]),
            ),
          },
        });
        await connection.workflowService.terminateWorkflowExecution({
          namespace,
          workflowExecution: { workflowId },
          reason: 'readiness probe',
        });
        return;
      } catch (err) {
        if (Date.now() > deadline)
          throw new Error(`namespace ${namespace} never accepted a workflow: ${(err as Error).message}`);
        await sleep(500);
      }
    }
  } finally {
    await connection.close();
  }
}

/** A search attribute value of the given type as the server reads it (JSON payload with its type in the metadata). */
function probeEncoding() {
  const enc = (s: string) => new TextEncoder().encode(s);
  return {
    encodeSearchAttribute(type: string): temporal.api.common.v1.IPayload {
      const value = type === 'INT' ? 1 : 'probe';
      return {
        metadata: { encoding: enc('json/plain'), type: enc(type === 'INT' ? 'Int' : 'Keyword') },
        data: enc(JSON.stringify(value)),
      };
    },
  };
}
