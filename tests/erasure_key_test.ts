/** The erasure key file: created owner-only, and an existing one made owner-only by writers. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { erasureKey } from "../lib/obs/maint/erasure_key.ts";
import { StorageError } from "../lib/errors.ts";
import { exists, withTempDir } from "./_helpers.ts";

const POSIX = Deno.build.os !== "windows";
const KEY_HEX = "ab".repeat(32);

function modeOf(path: string): number {
  return (Deno.statSync(path).mode ?? 0) & 0o777;
}

Deno.test({
  name: "erasureKey() creates the key owner-only",
  ignore: !POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const key = await erasureKey(dir);
      assert.equal(key.length, 32);
      assert.equal(modeOf(join(dir, "erasure.key")), 0o600);
    });
  },
});

Deno.test({
  name:
    "erasureKey() makes an existing world-readable key owner-only; a reader leaves it alone",
  ignore: !POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, "erasure.key");
      await Deno.writeTextFile(path, KEY_HEX + "\n");
      await Deno.chmod(path, 0o644);
      const read = await erasureKey(dir, { create: false });
      assert.equal(read[0], 0xab);
      assert.equal(modeOf(path), 0o644, "a reader changes nothing");
      const key = await erasureKey(dir);
      assert.deepEqual(key, read, "the same key");
      assert.equal(modeOf(path), 0o600);
      assert.equal(await Deno.readTextFile(path), KEY_HEX + "\n");
    });
  },
});

Deno.test("erasureKey() never replaces a missing key while records made with one exist", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "erasure.key");
    const inUse = () =>
      Promise.resolve({ records: 2, key_ids: ["sha256:0123456789abcdef"] });
    await assert.rejects(
      () => erasureKey(dir, { madeWith: inUse }),
      (e) =>
        e instanceof StorageError &&
        e.message ===
          `The erasure key ${path} is missing, but the database holds 2 erasure receipts made with key sha256:0123456789abcdef; restore erasure.key from a backup of this data directory (a new key would leave them unverifiable)`,
    );
    assert.equal(await exists(path), false);
    // Nothing made with a key yet: creating one loses nothing.
    const none = () => Promise.resolve({ records: 0, key_ids: [] });
    await assert.rejects(
      () => erasureKey(dir, { create: false, madeWith: none }),
      /No erasure key at .*otherwise trace obs init creates one/,
    );
    assert.equal(await exists(path), false);
    const key = await erasureKey(dir, { madeWith: none });
    // An existing key is read whatever the database holds.
    assert.deepEqual(await erasureKey(dir, { madeWith: inUse }), key);
  });
});
