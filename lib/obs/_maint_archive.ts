/**
 * A directory archive for source expiry: the envelopes go to a new private
 * NDJSON file, and the callback acknowledges with `true` only after the file
 * (and on POSIX its directory entry) reached stable storage.
 *
 * @module
 */

import { join } from "node:path";
import { ensurePrivateDir } from "../data_dir.ts";
import type { EnvelopeRecord } from "./_maint_projection.ts";

/** Where a directory archive wrote, for the operator's report. */
export interface ArchiveWrite {
  path: string;
  envelopes: number;
  bytes: number;
}

/** Returns an archive callback writing `expiry-<label>-<time>.ndjson` files into `dir`. */
export function directoryArchive(
  dir: string,
  label: string,
  onWrite: (write: ArchiveWrite) => void = () => {},
): (envelopes: readonly EnvelopeRecord[]) => Promise<true> {
  return async (envelopes) => {
    await ensurePrivateDir(dir);
    const stamp = new Date().toISOString().replaceAll(":", "").replaceAll(
      ".",
      "",
    );
    const path = join(
      dir,
      `expiry-${label.replace(/[^A-Za-z0-9_-]/g, "")}-${stamp}.ndjson`,
    );
    const text =
      envelopes.map((envelope) => JSON.stringify(envelope)).join("\n") + "\n";
    const bytes = new TextEncoder().encode(text);
    // createNew: an archive never overwrites an earlier one.
    const file = await Deno.open(path, {
      createNew: true,
      write: true,
      mode: 0o600,
    });
    try {
      let written = 0;
      while (written < bytes.length) {
        written += await file.write(bytes.subarray(written));
      }
      await file.sync();
    } finally {
      file.close();
    }
    await syncDirectory(dir);
    onWrite({ path, envelopes: envelopes.length, bytes: bytes.length });
    return true;
  };
}

async function syncDirectory(dir: string): Promise<void> {
  if (Deno.build.os === "windows") return;
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}
