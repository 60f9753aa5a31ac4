/// <reference lib="deno.worker" />
/**
 * The thread of {@link startBackgroundCheckpoints}: its own connection to
 * the database file, copying the WAL back into the file when asked
 * (`PRAGMA wal_checkpoint(PASSIVE)`: it never waits for the writer, whose
 * new frames the next checkpoint takes), or copying it and truncating it
 * (`TRUNCATE`), which the connection tries without waiting either (it has
 * no busy timeout): with a writer or a reader in the way it copies what it
 * can and says it did not complete. The copy and the syncs it needs happen
 * here, not on the thread that serves requests. Private to `ingest/`.
 *
 * Messages in: `{ url }` to open, `"checkpoint"`, `"truncate"`, `"close"`;
 * out: `"done"` after each checkpoint (or failed one), `"truncated"` after
 * a truncating one that completed, `"closed"`.
 *
 * @module
 */

import { type Client, createClient } from "@libsql/client";

let client: Client | undefined;

self.onmessage = async (event: MessageEvent<unknown>) => {
  const message = event.data;
  if (typeof message === "object" && message !== null && "url" in message) {
    client = createClient({ url: String(message.url) });
    return;
  }
  if (message === "checkpoint") {
    try {
      await client?.execute("PRAGMA wal_checkpoint(PASSIVE)");
    } catch {
      // A failed checkpoint leaves the WAL as it was; the writer's own
      // checkpoint past its bound still applies.
    }
    self.postMessage("done");
    return;
  }
  if (message === "truncate") {
    let complete = false;
    try {
      const result = await client?.execute("PRAGMA wal_checkpoint(TRUNCATE)");
      const row = result?.rows[0];
      complete = row !== undefined && Number(row.busy ?? row[0]) === 0;
    } catch {
      // As a failed passive one: the WAL stays, and the next one tries again.
    }
    self.postMessage(complete ? "truncated" : "done");
    return;
  }
  if (message === "close") {
    client?.close();
    client = undefined;
    self.postMessage("closed");
  }
};
