/**
 * Registered targets: an id bound once and for all to one staging config.
 * The same id with an identical config is a no-op; a different config is
 * refused, naming the fields that differ (never their values). Each
 * registration is also a chained `target` entry so `ledger verify` covers it.
 *
 * @module
 */

import * as v from "valibot";
import { canonicalJson, digestOf } from "../canonical_json.ts";
import {
  parseStoredStagingConfig,
  type StagingConfig,
} from "../contract/config.ts";
import type { TraceDb } from "../db.ts";
import { ConflictError, LedgerIntegrityError, UsageError } from "../errors.ts";
import type { TargetRef } from "../runner/report.ts";
import {
  appendEntries,
  executor,
  type LedgerSource,
  payloadDigest,
} from "./chain.ts";
import { verifiedEntries } from "./_intact.ts";
import { quoteValue } from "../echo.ts";

/** How a target came to be registered. */
export type TargetSource = "registered" | "config";

/** A registered target as stored. */
export interface TargetRecord {
  /** The target id (1 to 64 characters of `a-z 0-9 . _ -`). */
  target_id: string;
  /** Named with `external-register`, or derived from a config (`cfg-…`). */
  source: TargetSource;
  /** The adapter the config points at. */
  base_url: string;
  /** The config bound to the id, for good. */
  config: StagingConfig;
  /** `sha256:` of the config's canonical JSON. */
  config_digest: string;
  /** When it was registered, ISO 8601. */
  created_at: string;
}

/** What {@link registerTarget} binds: an id, its config and how it came to be. */
export interface TargetRegistration {
  /** The id to bind. */
  targetId: string;
  /** The config to bind it to. */
  config: StagingConfig;
  /** How the target came to be. */
  source: TargetSource;
}

/** Result of {@link registerTarget}. */
export interface Registration {
  /** The target as stored (the earlier registration when it already existed). */
  target: TargetRecord;
  /** False when the identical registration already existed. */
  created: boolean;
}

const TARGET_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** What begins the id of every config-only run's target, and no registered target's. */
export const CONFIG_TARGET_PREFIX = "cfg-";

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
      `Invalid target id ${quoteValue(id)}: ${result.issues[0]?.message}`,
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

/** Reads a registered target, or `null`; refused unless its row matches its verified registration. */
export async function readTarget(
  db: TraceDb,
  targetId: string,
): Promise<TargetRecord | null> {
  return await readTargetIn(db, targetId);
}

/** A target row joined with its chained registration, so a read can verify the row. */
const TARGET_SELECT =
  `SELECT t.target_id, t.source, t.config_json, t.config_digest, t.created_at,
    e.seq AS e_seq, e.kind AS e_kind, e.entity_id AS e_entity_id,
    e.target_id AS e_target_id, e.payload AS e_payload,
    e.payload_digest AS e_payload_digest, e.prev_chain AS e_prev_chain,
    e.chain_digest AS e_chain_digest, e.created_at AS e_created_at,
    e.chain_version AS e_chain_version
  FROM ledger_targets t LEFT JOIN ledger_entries e
    ON e.kind = 'target' AND e.entity_id = t.target_id`;

async function readTargetIn(
  source: LedgerSource,
  targetId: string,
): Promise<TargetRecord | null> {
  const result = await executor(source).execute({
    sql: `${TARGET_SELECT} WHERE t.target_id = ?`,
    args: [targetId],
  });
  return (await verifiedTargets(source, result.rows))[0] ?? null;
}

/** Every registered target, by id. */
export async function listTargets(db: TraceDb): Promise<TargetRecord[]> {
  const result = await db.client.execute(
    `${TARGET_SELECT} ORDER BY t.target_id`,
  );
  return await verifiedTargets(db, result.rows);
}

async function verifiedTargets(
  source: LedgerSource,
  rows: Record<string, unknown>[],
): Promise<TargetRecord[]> {
  for (const row of rows) {
    if (row.e_seq === null) throw alteredTarget(row);
  }
  const registrations = await verifiedEntries(
    source,
    rows.map((row) => registrationRow(row)),
  );
  return rows.map((row, i) => toTarget(row, registrations[i]!.payload));
}

/** The registration entry columns of a joined target row, as an entry row. */
function registrationRow(
  row: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).filter(([key]) => key.startsWith("e_")).map((
      [key, value],
    ) => [key.slice(2), value]),
  );
}

function toTarget(
  row: Record<string, unknown>,
  registration: string,
): TargetRecord {
  refuseAlteredTarget(row, registration);
  // Stored configs were validated on the way in; parsing again fills defaults
  // the same way and keeps the type honest.
  const config = parseStoredStagingConfig(
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
 * A target row is evidence too (runs and replays go to its base URL): its
 * config must match its digest, and both must match the chained
 * registration entry, which the chain vouches for.
 */
function refuseAlteredTarget(
  row: Record<string, unknown>,
  registration: string,
): void {
  const chained = JSON.parse(registration) as Record<string, unknown>;
  const intact =
    payloadDigest(String(row.config_json)) === String(row.config_digest) &&
    chained.config_digest === String(row.config_digest) &&
    chained.source === String(row.source) &&
    chained.created_at === String(row.created_at);
  if (!intact) throw alteredTarget(row);
}

function alteredTarget(row: Record<string, unknown>): LedgerIntegrityError {
  const seq = row.e_seq === null ? 0 : Number(row.e_seq);
  return new LedgerIntegrityError(
    `The ledger is broken at entry ${seq}: run trace ledger verify (the row of target "${
      String(row.target_id)
    }" differs from its registration)`,
  );
}

/** The reference a report carries for a registered target. */
export function targetRef(target: TargetRecord): TargetRef {
  return {
    id: target.target_id,
    base_url: target.base_url,
    source: target.source,
  };
}
