/**
 * Where a backup or a run's output file may not go: a place Trace reads as
 * its own state, where the file would later be taken for a broken
 * checkpoint or a damaged key.
 *
 * @module
 */

import { basename, join } from "node:path";
import { UsageError } from "../errors.ts";
import { ERASURE_KEY_FILE } from "../obs/maint/mod.ts";
import { checkpointDir } from "../runner/checkpoint.ts";
import { isInside } from "../state_files.ts";

/**
 * Throws a {@link UsageError} when `file` lies in the data directory's
 * `external/` folder (every `<name>.json` there is read as a run's
 * checkpoint, which the gate then refuses as broken) or is its erasure key.
 * `what` names the file in the message: `a backup to` (the default) or an
 * output's flag (`--junit`).
 */
export async function refuseStateDestination(
  file: string,
  dataDir: string,
  what = "a backup to",
): Promise<void> {
  const checkpoints = checkpointDir(dataDir);
  if (await isInside(file, checkpoints)) {
    throw new UsageError(
      `Cannot write ${what} ${file}: ${checkpoints} holds run checkpoints, which Trace reads as its own (the gate would take the file for a broken checkpoint); write it outside the data directory's ${
        basename(checkpoints)
      }/ folder`,
    );
  }
  const key = join(dataDir, ERASURE_KEY_FILE);
  if (await isInside(file, key)) {
    throw new UsageError(
      `Cannot write ${what} ${file}: it is the data directory's erasure key, which Trace reads as its own; write it elsewhere`,
    );
  }
}
