/**
 * The connection guard of `trace serve` on a thread of its own (see
 * `listenGuarded` in `listen.ts`): it listens, bounds and relays
 * connections to the inner server, and reports where it listens, a failure
 * to listen, or that it closed.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import {
  guardConnections,
  type GuardedServer,
  type GuardSetup,
  type GuardWorkerMessage,
} from "./listen.ts";

let guard: GuardedServer | undefined;

const send = (message: GuardWorkerMessage) => self.postMessage(message);

self.onmessage = async (event: MessageEvent<GuardSetup | "shutdown">) => {
  if (event.data === "shutdown") {
    await guard?.shutdown();
    send({ kind: "closed" });
    return;
  }
  try {
    guard = guardConnections(event.data);
    send({ kind: "listening", addr: guard.addr });
  } catch (error) {
    const { name, message } = error instanceof Error
      ? error
      : { name: "Error", message: String(error) };
    send({ kind: "failed", name, message });
  }
};
