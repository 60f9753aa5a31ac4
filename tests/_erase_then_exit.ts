/**
 * Applies an erasure of one thread and ends the process before any
 * checkpoint, as a process killed between an erasure's commit and its
 * checkpoint ends: the receipt is committed, the erased text still in the
 * file. Prints the receipt id. Run by `erasure_interrupt_test.ts`:
 * `deno run -A tests/_erase_then_exit.ts DATA_DIR APPLICATION THREAD CONFIRMATION`.
 */

import { openDb } from "../lib/db.ts";
import { parseErasureSubject } from "../lib/obs/maint/mod.ts";
import { eraseSubject, erasureKeyFor } from "../lib/runs/mod.ts";

const [dataDir, application, thread, confirmation] = Deno.args;
const db = await openDb({ dataDir: dataDir! });
const subject = parseErasureSubject({
  application_id: application,
  thread_id: thread,
});
const { receipt } = await eraseSubject(db, subject, confirmation!, {
  key: await erasureKeyFor(db, dataDir!, { create: false }),
  reclaim: false,
});
await Deno.stdout.write(
  new TextEncoder().encode(receipt.receipt.receipt_id + "\n"),
);
// No close: closing the last connection would checkpoint the WAL.
Deno.exit(0);
