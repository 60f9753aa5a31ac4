/**
 * The rows of the normalized index, shared by ingest and by a rebuild from
 * envelopes, and bulk INSERT statements for them: chunks of multi-row
 * INSERTs, one statement per few hundred rows (maintenance writes these;
 * ingest writes the same rows as an SQL script, `_sql_literal.ts`).
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import type { ResourceRef } from "../model.ts";
import type { EventMetadata, NormalizedPreview } from "../normalize.ts";

/** A statement with positional arguments (always the object form, never bare SQL). */
export interface SqlStatement {
  sql: string;
  args: InValue[];
}

/** One index row to write. */
export interface IndexEntry {
  seq: number;
  received_at: number;
  fingerprint: string;
  meta: EventMetadata;
}

/** Columns of `obs_events`, in table order. */
export const EVENT_COLUMNS = [
  "seq",
  "application_id",
  "user_id",
  "agent_id",
  "memory_id",
  "thread_id",
  "root_trace_id",
  "turn_id",
  "run_id",
  "event_id",
  "parent_event_id",
  "kind",
  "stage",
  "coverage_profile",
  "status",
  "tool",
  "success",
  "store",
  "ts",
  "started_at",
  "ended_at",
  "received_at",
  "resource_count",
  "candidate_count",
  "selected_count",
  "outcome_verified",
  "outcome_status",
  "fingerprint",
  "meta",
] as const;

/** Columns of `obs_resources`, in table order. */
export const RESOURCE_COLUMNS = [
  "seq",
  "ordinal",
  "application_id",
  "origin",
  "type",
  "id",
  "version",
  "role",
] as const;

// 400 rows x 29 columns stays well below SQLite's 32,766 bound parameters.
const ROWS_PER_STATEMENT = 400;

/** Builds multi-row `INSERT INTO table (cols) VALUES (…), (…)` statements in chunks. */
export function chunkedInsert(
  table: string,
  columns: readonly string[],
  rows: InValue[][],
  verb = "INSERT",
): SqlStatement[] {
  const statements: SqlStatement[] = [];
  const tuple = `(${columns.map(() => "?").join(", ")})`;
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(start, start + ROWS_PER_STATEMENT);
    statements.push({
      sql: `${verb} INTO ${table} (${columns.join(", ")}) VALUES ${
        chunk.map(() => tuple).join(", ")
      }`,
      args: chunk.flat(),
    });
  }
  return statements;
}

function bool(value: boolean | null): number | null {
  return value === null ? null : value ? 1 : 0;
}

function eventRow(entry: IndexEntry): InValue[] {
  const m = entry.meta;
  const candidates = m.selection?.candidates ?? [];
  const meta = JSON.stringify({
    resources: m.resources,
    attributes: m.attributes,
    selection: m.selection,
    outcome: m.outcome,
  });
  return [
    entry.seq,
    m.application_id,
    m.user_id,
    m.agent_id,
    m.memory_id,
    m.thread_id,
    m.root_trace_id,
    m.turn_id,
    m.run_id,
    m.event_id,
    m.parent_event_id,
    m.kind,
    m.stage,
    m.coverage_profile,
    m.status,
    m.tool,
    bool(m.success),
    m.store,
    m.started_at ?? entry.received_at,
    m.started_at,
    m.ended_at,
    entry.received_at,
    m.resources.length,
    candidates.length,
    candidates.filter((c) => c.selected).length,
    m.outcome ? bool(m.outcome.verified) : null,
    m.outcome?.status ?? null,
    entry.fingerprint,
    meta,
  ];
}

function resourceRows(entry: IndexEntry): InValue[][] {
  const m = entry.meta;
  const rows: InValue[][] = [];
  const push = (origin: string, ref: ResourceRef) =>
    rows.push([
      entry.seq,
      rows.length,
      m.application_id,
      origin,
      ref.type,
      ref.id,
      ref.version ?? null,
      ref.role ?? null,
    ]);
  for (const ref of m.resources) push("resource", ref);
  for (const candidate of m.selection?.candidates ?? []) {
    push("candidate", candidate.ref);
  }
  if (m.outcome?.artifact) push("outcome", m.outcome.artifact);
  return rows;
}

/** Values of the `obs_events` rows and `obs_resources` rows of `entries`, in column order. */
export function indexRows(
  entries: readonly IndexEntry[],
): { events: InValue[][]; resources: InValue[][] } {
  return {
    events: entries.map(eventRow),
    resources: entries.flatMap(resourceRows),
  };
}

/** Statements writing the index rows and resource refs of `entries`. */
export function indexStatements(
  entries: readonly IndexEntry[],
): SqlStatement[] {
  const rows = indexRows(entries);
  return [
    ...chunkedInsert("obs_events", EVENT_COLUMNS, rows.events),
    ...chunkedInsert("obs_resources", RESOURCE_COLUMNS, rows.resources),
  ];
}

/** Columns of `obs_previews`, in table order. */
export const PREVIEW_COLUMNS = [
  "seq",
  "chars",
  "truncated",
  "sha256",
  "created_at",
  "content",
] as const;

/** One preview to write (content stays in `obs_previews` only). */
export interface PreviewEntry {
  /** Key of the event the preview belongs to. */
  seq: number;
  /** The content, as normalization capped it. */
  preview: NormalizedPreview;
  /** When it was stored, epoch ms. */
  created_at: number;
}

/** Values of the `obs_previews` row of each entry, in column order. */
export function previewRows(previews: readonly PreviewEntry[]): InValue[][] {
  return previews.map(({ seq, preview, created_at }) => [
    seq,
    preview.chars,
    preview.truncated ? 1 : 0,
    preview.sha256,
    created_at,
    preview.content,
  ]);
}
