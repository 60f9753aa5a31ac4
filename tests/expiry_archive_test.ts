import assert from "node:assert/strict";
import { basename, dirname, isAbsolute, relative } from "node:path";
import { withTempDir } from "./_helpers.ts";
import { directoryArchive, type EnvelopeRecord } from "../lib/obs/maint/mod.ts";
import { claimArchive, writeArchiveFile } from "../lib/obs/maint/archive.ts";

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
    assert.deepEqual(await archive([ENVELOPE]), {
      archived: true,
      location: written[0],
    });
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

Deno.test("directoryArchive() given a relative directory names its file by absolute path", async () => {
  await withTempDir(async (dir) => {
    const archive = directoryArchive(relative(Deno.cwd(), dir), "plan");
    const receipt = await archive([ENVELOPE]);
    assert.ok(isAbsolute(receipt.location));
    assert.equal(dirname(receipt.location), dir);
    assert.deepEqual(names(dir), [basename(receipt.location)]);
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

Deno.test("claimArchive() refuses a lock path that is a symbolic link, creating nothing where it points", async () => {
  await withTempDir(async (dir) => {
    const archive = `${dir}/archive`;
    await Deno.mkdir(archive);
    const target = `${dir}/elsewhere/planted`;
    await Deno.symlink(target, `${archive}/.expiry-plan1.lock`);
    await assert.rejects(
      () => claimArchive(archive, "plan1"),
      (error: Error) => {
        assert.equal(
          error.message,
          `Cannot lock the archive ${archive}/.expiry-plan1.lock: it is a symbolic link, not a lock an apply made; remove it, then apply again`,
        );
        return true;
      },
    );
    await assert.rejects(Deno.lstat(target), Deno.errors.NotFound);
  });
});

Deno.test("claimArchive() removes its own plan's unfinished archives only, never another plan's whose label starts alike", async () => {
  await withTempDir(async (dir) => {
    const partial = (label: string) =>
      `.expiry-${label}-2026-12-01T183527249Z.ndjson.${crypto.randomUUID()}.partial`;
    const mine = partial("a");
    const theirs = partial("a-b");
    for (const name of [mine, theirs]) {
      await Deno.writeTextFile(`${dir}/${name}`, "{");
    }
    await using claim = await claimArchive(dir, "a");
    assert.deepEqual(claim.removedPartials, [mine]);
    await Deno.stat(`${dir}/${theirs}`);
  });
});
