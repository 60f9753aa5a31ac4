/**
 * An erasure whose deletes committed always reaches the database file, or
 * says it has not: Ctrl-C during `trace obs erase --apply` never leaves the
 * erased text in `trace.db` behind a receipt and a clean verification.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../cli.ts";
import { openDb } from "../lib/db.ts";
import { erasureReachedFile } from "../lib/obs/maint/mod.ts";
import {
  type CapturedIo,
  captureIo,
  serveCommand,
  withListeningChild,
  withTempDir,
} from "./_helpers.ts";
import { fileHolds } from "./erasure_support.ts";

const SECRET = "BIGSECRET_5e1f0c";
const THREAD = ["--application", "app-1", "--thread", "BIGTHREAD"];

/** A CLI stream whose Ctrl-C is `controller`, aborted when `when` accepts an exit note. */
function interruptibleIo(
  controller: AbortController,
  when: (note: string) => boolean,
): CapturedIo {
  const io = captureIo();
  return {
    ...io,
    interrupted: controller.signal,
    setExitNote: (note) => {
      if (note !== null && when(note)) controller.abort();
    },
  };
}

async function trace(args: string[], io: CapturedIo = captureIo()) {
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

/**
 * `trace obs erase --apply` of the thread with `confirmation` (`flags` before
 * the data flags), Ctrl-C'd once an exit note matches `interruptAt`;
 * `interrupted` says whether the Ctrl-C came.
 */
async function applyErasure(
  data: string[],
  confirmation: string,
  options: { interruptAt?: RegExp; flags?: string[] } = {},
) {
  const controller = new AbortController();
  const result = await trace(
    [
      "obs",
      "erase",
      ...THREAD,
      "--apply",
      "--confirm",
      confirmation,
      ...options.flags ?? [],
      ...data,
    ],
    interruptibleIo(controller, (note) => !!options.interruptAt?.test(note)),
  );
  return { ...result, interrupted: controller.signal.aborted };
}

/** A data directory whose thread BIGTHREAD holds 300 events quoting {@link SECRET}; `fn` gets its flags, path and dry run. */
async function withThread<T>(
  fn: (data: string[], dbPath: string, confirmation: string) => Promise<T>,
): Promise<T> {
  return await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    assert.equal((await trace(["obs", "init", ...data])).code, 0);
    const io = captureIo(
      Array.from({ length: 300 }, (_, i) =>
        JSON.stringify({
          event_id: `e${i}`,
          application_id: "app-1",
          agent_id: "bot",
          kind: "llm_call",
          thread_id: "BIGTHREAD",
          preview: `${SECRET} ${i} said in confidence`,
        })).join("\n"),
    );
    assert.equal(await main(["events", "ingest", "-", ...data], io), 0);
    const dbPath = join(dir, "data", "trace.db");
    assert.equal(await fileHolds(dbPath, SECRET), true);
    const dry = await trace(["obs", "erase", ...THREAD, "--json", ...data]);
    return await fn(data, dbPath, JSON.parse(dry.out).confirmation);
  });
}

Deno.test("a Ctrl-C once the erasure committed lets the checkpoint finish, then says it was interrupted", async () => {
  await withThread(async (data, dbPath, confirmation) => {
    const apply = await applyErasure(data, confirmation, {
      interruptAt: /was committing/,
    });
    assert.equal(apply.interrupted, true, "interrupted at the commit");
    assert.equal(apply.code, 0, apply.err);
    assert.match(apply.out, /^Erased 300 events/);
    assert.match(apply.out, /WAL checkpointed into the file/);
    assert.match(
      apply.out,
      /Interrupted: the erasure had already committed, so it was finished first, the checkpoint included\n/,
    );
    assert.equal(await fileHolds(dbPath, SECRET), false);
    const receipt = /Receipt (erasure-\S+):/.exec(apply.out)![1]!;
    const verify = await trace([
      "obs",
      "erase",
      "--verify",
      receipt,
      ...THREAD,
      "--json",
      ...data,
    ]);
    assert.equal(verify.code, 0, verify.err);
    assert.equal(JSON.parse(verify.out).reached_file, true);
  });
});

Deno.test("a Ctrl-C before the erasure committed calls it off: nothing changes and no receipt is made", async () => {
  await withThread(async (data, dbPath, confirmation) => {
    const apply = await applyErasure(data, confirmation, {
      interruptAt: /had not committed/,
      flags: ["--json"],
    });
    assert.equal(apply.code, 2);
    assert.equal(
      JSON.parse(apply.out).error.message,
      "Interrupted before the erasure committed: nothing was changed; run the same command again to erase",
    );
    assert.equal(await fileHolds(dbPath, SECRET), true);
    const list = await trace(["obs", "erase", "--receipts", "--json", ...data]);
    assert.deepEqual(JSON.parse(list.out).receipts, []);
    // The same confirmation still applies.
    const again = await applyErasure(data, confirmation);
    assert.equal(again.code, 0, again.err);
  });
});

/** Applies the erasure in a process that ends between its commit and its checkpoint; returns the receipt id. */
async function eraseThenExit(
  data: string[],
  confirmation: string,
): Promise<string> {
  const killed = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "tests/_erase_then_exit.ts",
      data[1]!,
      "app-1",
      "BIGTHREAD",
      confirmation,
    ],
    cwd: new URL("..", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  assert.equal(killed.code, 0, decoder.decode(killed.stderr));
  return decoder.decode(killed.stdout).trim();
}

Deno.test("an erasure whose checkpoint never ran is not verified clean until trace obs erase --finish completes it", async () => {
  await withThread(async (data, dbPath, confirmation) => {
    // A writable connection an earlier in-process command left to the
    // garbage collector checkpoints the WAL when it is collected, unless
    // another connection is open: this one keeps the file as the ended
    // process left it until --finish is asked.
    const reader = await openDb({ dataDir: data[1]!, readOnly: true });
    let id: string;
    try {
      // A process ended between the erasure's commit and its checkpoint.
      id = await eraseThenExit(data, confirmation);
      assert.equal(await fileHolds(dbPath, SECRET), true);
      const verify = await trace([
        "obs",
        "erase",
        "--verify",
        id,
        ...THREAD,
        ...data,
      ]);
      assert.equal(verify.code, 1, "not clean while the text is in the file");
      assert.match(
        verify.out,
        /nothing of it remains; but the erasure has not reached the database file \(no checkpoint after it completed\): the erased text may remain in trace\.db or its WAL until trace obs erase --finish completes\n$/,
      );
      const json = JSON.parse(
        (await trace([
          "obs",
          "erase",
          "--verify",
          id,
          ...THREAD,
          "--json",
          ...data,
        ])).out,
      );
      assert.equal(json.reached_file, false);
      assert.equal(json.remaining.clean, true);
      assert.equal(json.clean, false);
      const list = await trace(["obs", "erase", "--receipts", ...data]);
      assert.match(
        list.out,
        /\(ledger entry 1\) {2}NOT YET IN THE DATABASE FILE \(trace obs erase --finish\)\n$/,
      );
      assert.equal(
        await fileHolds(dbPath, SECRET),
        true,
        "readers change nothing",
      );
    } finally {
      reader.close();
    }

    const finish = await trace(["obs", "erase", "--finish", ...data]);
    assert.equal(finish.code, 0, finish.err);
    assert.match(
      finish.out,
      new RegExp(
        `^1 erasure \\(${id}\\) reached the database file: WAL checkpointed and truncated`,
      ),
    );
    assert.equal(await fileHolds(dbPath, SECRET), false);
    const clean = await trace([
      "obs",
      "erase",
      "--verify",
      id,
      ...THREAD,
      "--json",
      ...data,
    ]);
    assert.equal(clean.code, 0, clean.out);
    assert.equal(JSON.parse(clean.out).reached_file, true);
    const listed = await trace([
      "obs",
      "erase",
      "--receipts",
      "--json",
      ...data,
    ]);
    assert.equal(JSON.parse(listed.out).receipts[0].reached_file, true);
    const nothing = await trace([
      "obs",
      "erase",
      "--finish",
      "--json",
      ...data,
    ]);
    assert.equal(nothing.code, 0);
    assert.deepEqual(JSON.parse(nothing.out).receipts, []);
    for (
      const flags of [THREAD, ["--user", "ada"], ["--receipts"], [
        "--anonymous",
      ]]
    ) {
      const refused = await trace([
        "obs",
        "erase",
        "--finish",
        ...flags,
        ...data,
      ]);
      assert.equal(refused.code, 2, flags.join(" "));
      assert.match(refused.err, /--finish completes every erasure/);
    }
  });
});

Deno.test("any writing command's checkpoint completes an erasure that waited for one, and it stays reached when the WAL fills again", async () => {
  await withThread(async (data, dbPath, confirmation) => {
    const id = await eraseThenExit(data, confirmation);
    // Another writer (here `obs init`) checkpoints on its way out.
    const init = await trace(["obs", "init", ...data]);
    assert.equal(init.code, 0, init.err);
    assert.equal(await fileHolds(dbPath, SECRET), false);
    // A later write fills the WAL again: the erasure stays reached.
    const db = await openDb({ dataDir: data[1]! });
    try {
      await db.client.execute(
        "INSERT INTO obs_state (key, value, updated_at) VALUES ('later-write', '1', 0)",
      );
      assert.ok((await Deno.stat(`${dbPath}-wal`)).size > 0);
      assert.equal(await erasureReachedFile(db, id), true);
    } finally {
      db.close();
    }
  });
});

Deno.test("trace serve's own checkpoints complete an erasure that waited for one, while it serves", async () => {
  await withThread(async (data, dbPath, confirmation) => {
    // Keeps a connection this process left to the garbage collector from
    // checkpointing the WAL when collected (see above): only the server may.
    const reader = await openDb({ dataDir: data[1]!, readOnly: true });
    try {
      const id = await eraseThenExit(data, confirmation);
      assert.equal(await fileHolds(dbPath, SECRET), true);
      await servedUntilReached(data[1]!, id);
    } finally {
      reader.close();
    }
  });
});

/** Runs `trace serve` on `dataDir`: erasure `id` must reach the file while it serves. */
async function servedUntilReached(dataDir: string, id: string): Promise<void> {
  await withListeningChild(serveCommand(dataDir), async (url) => {
    // Events keep arriving, as they do at a server: it checkpoints after them.
    const sent = await fetch(`${url}/api/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        event_id: "after",
        application_id: "app-1",
        agent_id: "bot",
        kind: "llm_call",
      }),
    });
    assert.equal(sent.status, 200, await sent.text());
    // Read while the server still runs (its own close would checkpoint
    // too); the deadline only keeps a failure from hanging.
    const deadline = Date.now() + 30_000;
    let reached = false;
    while (!reached && Date.now() < deadline) {
      const db = await openDb({ dataDir, readOnly: true });
      try {
        reached = await erasureReachedFile(db, id) === true;
      } finally {
        db.close();
      }
      if (!reached) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(reached, true, "the server's checkpoints settled it");
    assert.equal(await fileHolds(join(dataDir, "trace.db"), SECRET), false);
  });
}
