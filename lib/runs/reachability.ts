/**
 * Before a run writes anything (a config target, a checkpoint, a ledger row),
 * its adapter must be reachable: a run against a port where nothing listens
 * can only produce a report full of connection errors about records that
 * never existed. The check opens a connection through the transport's own
 * connect path (TCP, plus the TLS handshake for https) and sends nothing.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import { ProtocolError, type StagingTransport } from "../contract/protocol.ts";
import { RefusedError, TraceError } from "../errors.ts";

/** The adapter could not be reached: nothing was run or recorded. */
export class AdapterUnreachableError extends TraceError {
  constructor(message: string, options?: ErrorOptions) {
    super("transport", message, options);
    this.name = "AdapterUnreachableError";
  }
}

/** An interrupt came before the run's first checkpoint: nothing was sent or recorded. */
export class RunNotStartedError extends RefusedError {
  constructor() {
    super(
      "Interrupted before the run started: nothing was sent to the staging adapter or recorded; run the same command again",
    );
    this.name = "RunNotStartedError";
  }
}

/** Options for {@link checkAdapterReachable}. */
export interface ReachabilityOptions {
  /**
   * The registered target whose stored config this is: a registration never
   * changes, so its base_url cannot be fixed in place.
   */
  registeredTarget?: string;
  /**
   * Calls the connection attempt off (a Ctrl-C): the check then throws
   * {@link RunNotStartedError} at once, rather than calling the adapter
   * unreachable after the whole ingest timeout.
   */
  signal?: AbortSignal;
}

/** Transports already found reachable, so a run resolved and started in two steps connects once. */
const reachable = new WeakSet<StagingTransport>();

/**
 * Throws {@link AdapterUnreachableError} (one line: what failed, what to do)
 * unless `transport` can connect to the adapter within the config's ingest
 * timeout. Transports without a `probe` (in-process ones) always pass.
 */
export async function checkAdapterReachable(
  config: Pick<StagingConfig, "base_url" | "timeout_seconds">,
  transport: StagingTransport,
  options: ReachabilityOptions = {},
): Promise<void> {
  if (!transport.probe || reachable.has(transport)) return;
  try {
    await transport.probe({
      timeoutMs: config.timeout_seconds.ingest * 1000,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    // Called off by the user: the adapter was not found unreachable.
    if (options.signal?.aborted) throw new RunNotStartedError();
    if (!(error instanceof ProtocolError)) throw error;
    throw new AdapterUnreachableError(
      `Cannot reach the staging adapter at ${config.base_url}: ${error.message}; ${
        remedyFor(error, options.registeredTarget)
      } (nothing was run or recorded)`,
      { cause: error },
    );
  }
  reachable.add(transport);
}

/** What to do about an adapter that could not be reached, in words. */
function remedyFor(
  error: ProtocolError,
  registeredTarget: string | undefined,
): string {
  // A certificate problem is not fixed by starting anything.
  if (error.failure === "tls") {
    return "check its certificate (one a private CA signed is trusted with DENO_CERT=/path/to/ca.pem)";
  }
  if (registeredTarget === undefined) return "start it or fix base_url";
  return `start it; the registered config of target ${registeredTarget} cannot change, so if the adapter moved, register its new base_url under a new target id with trace external-register --target NEW_ID --config FILE and run trace external-run --target NEW_ID`;
}
