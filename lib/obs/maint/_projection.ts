/**
 * Content-free projections shared by backfill and parity: what the index rows
 * of one envelope must be, derived through the same statement builder ingest
 * uses, and a field-by-field comparison with the rows actually stored.
 *
 * @module
 */

import type { InStatement, InValue, Row } from "@libsql/client";
import { canonicalJson, sha256Hex } from "../../canonical_json.ts";
import { EVENT_COLUMNS, indexStatements } from "../ingest/mod.ts";
import { type EventMetadata, metadataFromEnvelope } from "../normalize.ts";
import type { EnvelopeRecord } from "./envelopes.ts";

/** Columns of `obs_resources`, in table order. */
export const RESOURCE_SELECT =
  "seq, ordinal, application_id, origin, type, id, version, role";

/** The index rows an envelope should have. */
export interface ExpectedRows {
  meta: EventMetadata;
  /** Ordering time of the event (`started_at`, else `received_at`). */
  ts: number;
  /** `obs_events` values in {@link EVENT_COLUMNS} order. */
  event: InValue[];
  /** `obs_resources` rows in table order. */
  resources: InValue[][];
  /** The statements that write these rows. */
  statements: InStatement[];
}

/** Why an envelope cannot be projected. */
export type EnvelopeProblem = "envelope_unreadable" | "envelope_fingerprint";

/** Projects an envelope onto index rows, or names why it cannot be trusted. */
export function expectedRows(
  envelope: EnvelopeRecord,
): ExpectedRows | EnvelopeProblem {
  if (sha256Hex(envelope.body) !== envelope.fingerprint) {
    return "envelope_fingerprint";
  }
  let meta: EventMetadata;
  try {
    meta = metadataFromEnvelope(envelope.body);
  } catch {
    return "envelope_unreadable";
  }
  const statements = indexStatements([{
    seq: envelope.seq,
    received_at: envelope.received_at,
    fingerprint: envelope.fingerprint,
    meta,
  }]);
  const columns = RESOURCE_SELECT.split(", ").length;
  const resourceArgs = argsOf(statements, "obs_resources");
  const resourceRows: InValue[][] = [];
  for (let at = 0; at < resourceArgs.length; at += columns) {
    resourceRows.push(resourceArgs.slice(at, at + columns));
  }
  return {
    meta,
    ts: meta.started_at ?? envelope.received_at,
    event: argsOf(statements, "obs_events"),
    resources: resourceRows,
    statements,
  };
}

/** Positional arguments of the INSERT into `table` among `statements`. */
function argsOf(statements: readonly InStatement[], table: string): InValue[] {
  for (const statement of statements) {
    if (typeof statement === "string") continue;
    if (
      statement.sql.startsWith(`INSERT INTO ${table} `) &&
      Array.isArray(statement.args)
    ) {
      return [...statement.args];
    }
  }
  return [];
}

/** Normalizes a stored value so that equal data compares equal. */
function comparable(column: string, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (column === "meta") {
    try {
      return canonicalJson(JSON.parse(String(value)));
    } catch {
      return `unparseable:${sha256Hex(String(value))}`;
    }
  }
  if (typeof value === "bigint") return Number(value);
  return value;
}

/** Names of the columns where `row` differs from `expected` (empty when equal). */
export function eventDiff(expected: ExpectedRows, row: Row): string[] {
  const fields: string[] = [];
  EVENT_COLUMNS.forEach((column, index) => {
    if (
      comparable(column, expected.event[index]) !==
        comparable(column, row[column])
    ) {
      fields.push(column);
    }
  });
  return fields;
}

/** True when the stored resource rows equal the expected ones. */
export function resourcesEqual(
  expected: ExpectedRows,
  rows: readonly Row[],
): boolean {
  if (rows.length !== expected.resources.length) return false;
  const columns = RESOURCE_SELECT.split(", ");
  return rows.every((row, index) =>
    columns.every((column, c) =>
      comparable(column, expected.resources[index]![c]) ===
        comparable(column, row[column])
    )
  );
}

/** Groups rows by their `seq` column. */
export function bySeq(rows: readonly Row[]): Map<number, Row[]> {
  const grouped = new Map<number, Row[]>();
  for (const row of rows) {
    const seq = Number(row.seq);
    const list = grouped.get(seq) ?? [];
    list.push(row);
    grouped.set(seq, list);
  }
  return grouped;
}
