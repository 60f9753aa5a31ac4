/**
 * Whether a trace page has an index to read: the pages say so in words
 * instead of failing when the database has none yet.
 *
 * @module
 */

import type { TraceDb } from "../../lib/db.ts";
import { ObsNotInitializedError, requireObs } from "../../lib/obs/mod.ts";

/** True when the observability index is provisioned in `db`, false when it is missing or too old; other errors propagate. */
export async function obsProvisioned(db: TraceDb): Promise<boolean> {
  try {
    await requireObs(db);
    return true;
  } catch (error) {
    if (error instanceof ObsNotInitializedError) return false;
    throw error;
  }
}
