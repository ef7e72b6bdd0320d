/**
 * The workflow function types of contract/workflows.ts are what the worker registers: every
 * contract workflow is exported by the bundle's entry under its name (clients start them by name),
 * and the implementation is assignable to the contract's type (tsc checks the `satisfies` below).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as workflows from '../../../workflows';
import type * as contract from '../../../contract/workflows';

const implemented = {
  ConversationWorkflow: workflows.ConversationWorkflow,
  TurnWorkflow: workflows.TurnWorkflow,
  PurgeConversationWorkflow: workflows.PurgeConversationWorkflow,
  InspectRoundWorkflow: workflows.InspectRoundWorkflow,
} satisfies {
  ConversationWorkflow: contract.ConversationWorkflow;
  TurnWorkflow: contract.TurnWorkflow;
  PurgeConversationWorkflow: contract.PurgeConversationWorkflow;
  InspectRoundWorkflow: contract.InspectRoundWorkflow;
};

test('each contract workflow is exported by workflows/index.ts under its own name', () => {
  for (const [name, fn] of Object.entries(implemented)) {
    assert.equal(typeof fn, 'function', name);
    assert.equal(fn.name, name);
  }
});
