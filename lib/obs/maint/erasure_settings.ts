/**
 * The per-application propagation setting, kept in the index (`obs_state`)
 * so every process that ingests for the application honours it. An
 * application without a setting follows the process default
 * (`TRACE_OBS_ERASURE_PROPAGATION`).
 *
 * @module
 */

import * as v from "valibot";
import type { TraceDb } from "../../db.ts";
import { ConfigError } from "../../errors.ts";
import { OpaqueIdSchema } from "../model.ts";
import { requireObs } from "../schema.ts";
import type { ErasureExecutor } from "./erasure_participants.ts";

const PREFIX = "erasure.propagation:";

/** One application's stored setting. */
export interface PropagationSetting {
  application_id: string;
  enabled: boolean;
}

/** Stores `enabled` for `applicationId`; `null` removes the setting (the default applies again). */
export async function setErasurePropagation(
  db: TraceDb,
  applicationId: string,
  enabled: boolean | null,
  now: number = Date.now(),
): Promise<void> {
  // Only a new setting is checked: one stored earlier can always be removed.
  const parsed = v.safeParse(OpaqueIdSchema, applicationId);
  if (enabled !== null && !parsed.success) {
    throw new ConfigError(
      `Cannot set memory-deletion propagation: the application id ${
        parsed.issues[0]!.message
      }; give the id events carry as application_id`,
    );
  }
  await requireObs(db);
  const key = PREFIX + applicationId;
  if (enabled === null) {
    await db.client.execute({
      sql: "DELETE FROM obs_state WHERE key = ?",
      args: [key],
    });
    return;
  }
  await db.client.execute({
    sql: `INSERT INTO obs_state (key, value, updated_at) VALUES (?, ?, ?)
          ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    args: [key, JSON.stringify(enabled), now],
  });
}

/** Every stored setting, by application id. */
export async function erasurePropagationSettings(
  db: TraceDb,
): Promise<PropagationSetting[]> {
  await requireObs(db);
  const result = await db.client.execute({
    sql:
      "SELECT key, value FROM obs_state WHERE substr(key, 1, ?) = ? ORDER BY key",
    args: [PREFIX.length, PREFIX],
  });
  return result.rows.map((row) => ({
    application_id: String(row.key).slice(PREFIX.length),
    enabled: String(row.value) === "true",
  }));
}

/** Whether propagation is on for `applicationId`: its setting, else `byDefault`. */
export async function propagationEnabled(
  executor: ErasureExecutor,
  applicationId: string,
  byDefault: boolean,
): Promise<boolean> {
  const result = await executor.execute({
    sql: "SELECT value FROM obs_state WHERE key = ?",
    args: [PREFIX + applicationId],
  });
  const row = result.rows[0];
  return row ? String(row.value) === "true" : byDefault;
}
