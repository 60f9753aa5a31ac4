/**
 * Registered targets: an id bound once and for all to one staging config.
 * The same id with an identical config is a no-op; a different config is
 * refused, naming the fields that differ (never their values). Each
 * registration is also a chained `target` entry so `ledger verify` covers it.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import * as v from "valibot";
import { canonicalJson, digestOf } from "../canonical_json.ts";
import { parseStagingConfig, type StagingConfig } from "../contract/config.ts";
import type { TraceDb } from "../db.ts";
import { ConflictError, LedgerIntegrityError, UsageError } from "../errors.ts";
import type { TargetRef } from "../runner/report.ts";
import { appendEntries, payloadDigest } from "./chain.ts";

/** How a target came to be registered. */
export type TargetSource = "registered" | "config";

/** A registered target as stored. */
export interface TargetRecord {
  target_id: string;
  source: TargetSource;
  base_url: string;
  config: StagingConfig;
  config_digest: string;
  created_at: string;
}

/** What {@link registerTarget} binds: an id, its config and how it came to be. */
export interface TargetRegistration {
  targetId: string;
  config: StagingConfig;
  source: TargetSource;
}

/** Result of {@link registerTarget}. */
export interface Registration {
  target: TargetRecord;
  /** False when the identical registration already existed. */
  created: boolean;
}

const TARGET_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Valibot schema of a target id. */
export const TargetIdSchema = v.pipe(
  v.string("must be a string"),
  v.regex(
    TARGET_ID_PATTERN,
    "must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit",
  ),
);

/** Throws a {@link UsageError} unless `id` is a valid target id. */
export function validateTargetId(id: string): string {
  const result = v.safeParse(TargetIdSchema, id);
  if (!result.success) {
    throw new UsageError(
      `Invalid target id "${id}": ${result.issues[0]?.message}`,
    );
  }
  return result.output;
}

/** Registers `config` under `targetId`; idempotent, and immutable once written. */
export async function registerTarget(
  db: TraceDb,
  registration: TargetRegistration,
): Promise<Registration> {
  const { targetId, config, source } = registration;
  validateTargetId(targetId);
  const configDigest = digestOf(config);
  const found: { existing: TargetRecord | null } = { existing: null };
  const record: TargetRecord = {
    target_id: targetId,
    source,
    base_url: config.base_url,
    config,
    config_digest: configDigest,
    created_at: new Date().toISOString(),
  };
  await appendEntries(db, async (tx) => {
    const existing = await readTargetIn(tx, targetId);
    found.existing = existing;
    if (existing) {
      refuseDifferentConfig(existing, config);
      return [];
    }
    await tx.execute({
      sql:
        `INSERT INTO ledger_targets (target_id, source, config_json, config_digest, created_at)
        VALUES (?, ?, ?, ?, ?)`,
      args: [
        targetId,
        source,
        canonicalJson(config),
        configDigest,
        record.created_at,
      ],
    });
    return [{
      kind: "target",
      entityId: targetId,
      targetId,
      payload: targetPayload(record),
    }];
  });
  return found.existing
    ? { target: found.existing, created: false }
    : { target: record, created: true };
}

/** The chained payload of a registration. */
export function targetPayload(record: TargetRecord): unknown {
  return {
    schema: "trace.target/1",
    target_id: record.target_id,
    source: record.source,
    config: record.config,
    config_digest: record.config_digest,
    created_at: record.created_at,
  };
}

function refuseDifferentConfig(
  existing: TargetRecord,
  config: StagingConfig,
): void {
  const fields = configDifferences(existing.config, config);
  if (fields.length === 0) return;
  throw new ConflictError(
    `Cannot register target "${existing.target_id}": a different config is already registered (${
      fields.join(", ")
    } differ${
      fields.length === 1 ? "s" : ""
    }); registrations are immutable, register the new config under another id`,
  );
}

/** Dotted names of the fields whose values differ between two configs. */
export function configDifferences(
  a: unknown,
  b: unknown,
  prefix = "",
): string[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((key) =>
      configDifferences(a[key], b[key], prefix ? `${prefix}.${key}` : key)
    );
  }
  return canonicalJson(a ?? null) === canonicalJson(b ?? null)
    ? []
    : [prefix || "(config)"];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads a registered target, or `null`. */
export async function readTarget(
  db: TraceDb,
  targetId: string,
): Promise<TargetRecord | null> {
  return await readTargetIn(db.client, targetId);
}

/** A target row joined with its chained registration, so a read can verify the row. */
const TARGET_SELECT =
  `SELECT t.target_id, t.source, t.config_json, t.config_digest,
    t.created_at, e.payload AS registration, e.payload_digest AS registration_digest
  FROM ledger_targets t LEFT JOIN ledger_entries e
    ON e.kind = 'target' AND e.entity_id = t.target_id`;

async function readTargetIn(
  executor: Pick<Transaction, "execute">,
  targetId: string,
): Promise<TargetRecord | null> {
  const result = await executor.execute({
    sql: `${TARGET_SELECT} WHERE t.target_id = ?`,
    args: [targetId],
  });
  const row = result.rows[0];
  return row ? toTarget(row) : null;
}

/** Every registered target, by id. */
export async function listTargets(db: TraceDb): Promise<TargetRecord[]> {
  const result = await db.client.execute(
    `${TARGET_SELECT} ORDER BY t.target_id`,
  );
  return result.rows.map((row) => toTarget(row));
}

function toTarget(row: Record<string, unknown>): TargetRecord {
  refuseAlteredTarget(row);
  // Stored configs were validated on the way in; parsing again fills defaults
  // the same way and keeps the type honest.
  const config = parseStagingConfig(
    JSON.parse(String(row.config_json)),
    `stored config of target ${String(row.target_id)}`,
  );
  return {
    target_id: String(row.target_id),
    source: String(row.source) === "config" ? "config" : "registered",
    base_url: config.base_url,
    config,
    config_digest: String(row.config_digest),
    created_at: String(row.created_at),
  };
}

/**
 * A target row is evidence too (replays run against it): its config must
 * match its digest, and both must match the chained registration entry.
 */
function refuseAlteredTarget(row: Record<string, unknown>): void {
  const digest = String(row.config_digest);
  const registration = row.registration === null
    ? null
    : String(row.registration);
  const intact = payloadDigest(String(row.config_json)) === digest &&
    registration !== null &&
    payloadDigest(registration) === String(row.registration_digest) &&
    registrationMatches(registration, row);
  if (!intact) {
    throw new LedgerIntegrityError(
      `The registration of target "${
        String(row.target_id)
      }" in the ledger was changed after it was written; run trace ledger verify`,
    );
  }
}

function registrationMatches(
  registration: string,
  row: Record<string, unknown>,
): boolean {
  const chained = JSON.parse(registration) as Record<string, unknown>;
  return chained.config_digest === String(row.config_digest) &&
    chained.source === String(row.source) &&
    chained.created_at === String(row.created_at);
}

/** The reference a report carries for a registered target. */
export function targetRef(target: TargetRecord): TargetRef {
  return {
    id: target.target_id,
    base_url: target.base_url,
    source: target.source,
  };
}
