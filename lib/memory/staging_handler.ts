/**
 * The one adapter face of a memory pipeline: a staging operation name and a
 * JSON body in, the checked request and the answer out. It validates with the
 * contract's request schemas and knows no transport, so the demo's HTTP app
 * and the reference suite's in-process transport answer identically.
 *
 * @module
 */

import {
  type Operation,
  type OperationRequests,
  type OperationResponses,
  parseRequest,
} from "../contract/protocol.ts";
import type { MemoryPipeline } from "./pipeline.ts";

/** One answered staging request. */
export interface StagingExchange<K extends Operation = Operation> {
  /** The request body as the contract's schema parsed it. */
  request: OperationRequests[K];
  /** The answer to send back as JSON. */
  response: OperationResponses[K];
}

type Answer<K extends Operation> = (
  pipeline: MemoryPipeline,
  request: OperationRequests[K],
) => Promise<OperationResponses[K]>;

const ANSWERS: { [K in Operation]: Answer<K> } = {
  ingest: (pipeline, r) => pipeline.ingest(r.namespace, r.id, r.text),
  query: (pipeline, r) =>
    Promise.resolve({ text: pipeline.query(r.namespace, r.query).text }),
  inventory: (pipeline, r) => Promise.resolve(pipeline.inventory(r.namespace)),
  delete: async (pipeline, r) => {
    await pipeline.delete(r.namespace, r.ids);
    return { acknowledged: true };
  },
};

/**
 * Answers one staging operation from `pipeline`. Throws `StagingRequestError`
 * for a body the contract refuses (HTTP 400); any other error is the
 * pipeline's own failure (HTTP 500).
 */
export async function handleStagingRequest<K extends Operation>(
  pipeline: MemoryPipeline,
  op: K,
  body: unknown,
): Promise<StagingExchange<K>> {
  const request = parseRequest(op, body);
  // Background jobs that fell due are applied before the next request is answered.
  await pipeline.settled();
  const answer: Answer<K> = ANSWERS[op];
  return { request, response: await answer(pipeline, request) };
}
