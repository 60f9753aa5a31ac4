/**
 * How the runner reaches a reference system in-process: each request goes
 * through the pipeline's one adapter face (`handleStagingRequest`, the same
 * the demo's HTTP app calls), bodies are copied through JSON as on the wire,
 * latency is charged to virtual time, and failures look like the HTTP
 * transport's. A system that brings its own adapter face (Trace's own index)
 * gets the same treatment through {@link handlerTransport}. Serving a system
 * over loopback HTTP takes the demo's app (`createStagingApp`) instead.
 *
 * @module
 */

import {
  type Operation,
  ProtocolError,
  StagingRequestError,
  type StagingTransport,
} from "../contract/protocol.ts";
import { handleStagingRequest, type MemoryPipeline } from "../memory/mod.ts";

/** Options for {@link inProcessTransport}. */
export interface InProcessTransportOptions {
  /** Clock charged with each request's latency (a reference run's virtual time); without it requests take no time. */
  time?: { advance(ms: number): void };
  /** Virtual milliseconds per request (default 5). */
  latencyMs?: number;
}

/** A transport that answers from `pipeline` directly; errors look like the HTTP transport's. */
export function inProcessTransport(
  pipeline: MemoryPipeline,
  options: InProcessTransportOptions = {},
): StagingTransport {
  return handlerTransport(
    (op, request) => handleStagingRequest(pipeline, op, request),
    options,
  );
}

/**
 * Answers one staging operation in process: the checked request's answer,
 * or a `StagingRequestError` for a body the contract refuses.
 */
export type StagingHandler = (
  op: Operation,
  body: unknown,
) => Promise<{ response: object }>;

/**
 * A transport over any in-process adapter face (a system that brings its own
 * transport uses it): bodies are copied through JSON both ways as on the
 * wire, latency is charged to virtual time, and failures look like the HTTP
 * transport's.
 */
export function handlerTransport(
  handle: StagingHandler,
  options: InProcessTransportOptions = {},
): StagingTransport {
  const latency = options.latencyMs ?? 5;
  return {
    async post(op, body) {
      options.time?.advance(latency);
      const request: unknown = JSON.parse(JSON.stringify(body));
      let response: object;
      try {
        ({ response } = await handle(op, request));
      } catch (error) {
        throw asHttpFailure(op, error);
      }
      return JSON.parse(JSON.stringify(response)) as Record<string, unknown>;
    },
  };
}

/** The failure an HTTP client would have seen: 400 for a refused body, 500 otherwise. */
function asHttpFailure(op: string, error: unknown): ProtocolError {
  if (error instanceof StagingRequestError) {
    return new ProtocolError(
      "http_status",
      `Request /${op} failed: HTTP 400, expected 200 (${error.message})`,
      { status: 400, cause: error },
    );
  }
  return new ProtocolError(
    "http_status",
    `Request /${op} failed: HTTP 500, expected 200`,
    { status: 500, cause: error },
  );
}
