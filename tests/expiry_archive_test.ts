import assert from "node:assert/strict";
import { withTempDir } from "./_helpers.ts";
import { directoryArchive, type EnvelopeRecord } from "../lib/obs/maint/mod.ts";
import { writeArchiveFile } from "../lib/obs/maint/archive.ts";

const ENVELOPE: EnvelopeRecord = {
  seq: 1,
  application_id: "app-1",
  event_id: "e1",
  store: "default",
  source: "api",
  fingerprint: "0".repeat(64),
  body: "{}",
  received_at: 0,
};

function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((entry) => entry.name).sort();
}

Deno.test("directoryArchive() leaves only the finished archive in its directory", async () => {
  await withTempDir(async (dir) => {
    const written: string[] = [];
    const archive = directoryArchive(dir, "plan", (w) => written.push(w.path));
    assert.equal(await archive([ENVELOPE]), true);
    assert.deepEqual(names(dir), [written[0]!.slice(dir.length + 1)]);
    assert.match(
      names(dir)[0]!,
      /^expiry-plan-\d{4}-\d{2}-\d{2}T\d+Z\.ndjson$/,
    );
    assert.equal(
      (await Deno.readTextFile(written[0]!)).trim(),
      JSON.stringify(ENVELOPE),
    );
  });
});

Deno.test("writeArchiveFile() refuses a name that exists, keeps that file and leaves no temporary", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/expiry-plan-1.ndjson`;
    await Deno.writeTextFile(path, "earlier archive\n");
    await assert.rejects(
      writeArchiveFile(path, new TextEncoder().encode("new\n")),
      Deno.errors.AlreadyExists,
    );
    assert.equal(await Deno.readTextFile(path), "earlier archive\n");
    assert.deepEqual(names(dir), ["expiry-plan-1.ndjson"]);
  });
});

Deno.test("writeArchiveFile() whose write fails part-way leaves nothing under the final name", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/expiry-plan-1.ndjson`;
    const bytes = new TextEncoder().encode("x".repeat(1_000));
    // A full disk: half the bytes land, then the write fails.
    const fullDisk = async (file: Deno.FsFile, all: Uint8Array) => {
      await file.write(all.subarray(0, all.length / 2));
      throw new Error("No space left on device (os error 28)");
    };
    await assert.rejects(
      writeArchiveFile(path, bytes, fullDisk),
      /No space left on device/,
    );
    assert.deepEqual(names(dir), [], "no partial archive, no temporary");
  });
});
