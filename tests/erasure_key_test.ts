/** The erasure key file: created owner-only, and an existing one made owner-only by writers. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { erasureKey } from "../lib/obs/maint/erasure_key.ts";
import { withTempDir } from "./_helpers.ts";

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
