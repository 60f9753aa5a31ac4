/**
 * Writing a result file whole or not at all: the text goes to a temporary
 * file beside the target, which then takes the target's name. A full disk
 * or any other failure leaves no partial or zero-byte file behind; only the
 * temporary file is ever removed, never something this process did not
 * create.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";

/** Options for {@link writeFileWhole}. */
export interface WriteWholeOptions {
  /** Replace an existing regular file (default: refuse an existing path). */
  replace?: boolean;
}

/** Writes `text` to `path` atomically (mode 0600); throws the file system's error. */
export async function writeFileWhole(
  path: string,
  text: string,
  options: WriteWholeOptions = {},
): Promise<void> {
  const temp = join(
    dirname(path),
    `.${basename(path)}.${crypto.randomUUID().slice(0, 8)}.tmp`,
  );
  try {
    await Deno.writeTextFile(temp, text, { createNew: true, mode: 0o600 });
    if (options.replace) await Deno.rename(temp, path);
    else await linkNew(temp, path);
  } finally {
    await Deno.remove(temp).catch(() => {});
  }
}

/** Gives `temp` the name `path` unless `path` exists (a hard link refuses atomically). */
async function linkNew(temp: string, path: string): Promise<void> {
  try {
    await Deno.link(temp, path);
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) throw error;
    // File systems without hard links: check, then rename.
    if (await Deno.lstat(path).then(() => true, () => false)) {
      throw new Deno.errors.AlreadyExists(`${path} already exists`);
    }
    await Deno.rename(temp, path);
  }
}
