/**
 * Tables of the observability index (component `obs`). Provisioning is
 * explicit ({@link initializeObs}); every reader calls {@link requireObs}
 * instead, so a read never creates a table.
 *
 * - `obs_envelopes`: canonical source envelopes, metadata-only and immutable.
 *   Triggers refuse every UPDATE, and every DELETE that lacks a matching
 *   `obs_expiry_grants` row (the compare-and-delete path of source expiry
 *   and erasure; an erasure of scope `content` takes the same path to
 *   replace an envelope by its redacted copy, `maint/_erasure_redact.ts`).
 * - `obs_events`: the normalized index, one row per event, keyed by `seq`
 *   (shared with the envelope it was derived from).
 * - `obs_resources`: typed resource refs of events, selection candidates and
 *   outcome artifacts, for resource lookups and lineage.
 * - `obs_previews`: content, at most 16,000 characters, expirable on its own.
 * - `obs_coverage_profiles`: registered coverage profiles, keyed by
 *   application (`''` = every application without its own profile of that
 *   name) and name (version 2; version 1 keyed them by name alone).
 * - `obs_state`: small key/value state (the `seq` high-water mark).
 * - `obs_counts`: row counts of the four large tables (events by store),
 *   kept exact by triggers on every delete and store change (version 3)
 *   and by the writers of inserts (version 5), so health never counts a
 *   million rows.
 * - `obs_erased_events`: one tombstone per event an erasure of scope `all`
 *   removed, keyed by application and a keyed digest of the event id
 *   (version 6; `erased_events.ts`), so a resend of it writes nothing.
 * - `obs_archived_envelopes` (version 7): which archive location holds
 *   which envelope, recorded by source expiry as soon as its archive
 *   acknowledges, before any delete (`maint/expiry.ts`), so an erasure can
 *   name the files that hold the subject (`maint/_expired_archives.ts`);
 *   and the tombstones' number in `obs_counts` (`erased_events`), for health.
 *
 * Every index serves a query path of `query/` or `maint/`, and every such
 * path is checked to use its index (`tests/obs_index_plan_test.ts`): an
 * index costs every insert, so none is kept for a path that does not use it.
 *
 * @module
 */

import {
  appliedVersions,
  dbLocation,
  migrate,
  type Migration,
  refuseNewerSchema,
  type TraceDb,
} from "../db.ts";
import { StorageError } from "../errors.ts";
import { TOMBSTONE_SALT_KEY } from "./erased_events.ts";

/** Component name in `schema_migrations`. */
export const OBS_COMPONENT = "obs";

const ENVELOPES = `CREATE TABLE obs_envelopes (
  seq INTEGER PRIMARY KEY,
  application_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  store TEXT NOT NULL,
  source TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  body TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  UNIQUE (application_id, event_id)
)`;

const EXPIRY_GRANTS = `CREATE TABLE obs_expiry_grants (
  seq INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  granted_at INTEGER NOT NULL
)`;

const ENVELOPE_TRIGGERS = [
  `CREATE TRIGGER obs_envelopes_no_update BEFORE UPDATE ON obs_envelopes
BEGIN
  SELECT RAISE(ABORT, 'obs_envelopes rows are immutable');
END`,
  `CREATE TRIGGER obs_envelopes_guarded_delete BEFORE DELETE ON obs_envelopes
WHEN NOT EXISTS (
  SELECT 1 FROM obs_expiry_grants g
  WHERE g.seq = OLD.seq AND g.fingerprint = OLD.fingerprint
)
BEGIN
  SELECT RAISE(ABORT, 'obs_envelopes rows are deleted only by a reviewed source expiry');
END`,
];

const EVENTS = `CREATE TABLE obs_events (
  seq INTEGER PRIMARY KEY,
  application_id TEXT NOT NULL,
  user_id TEXT,
  agent_id TEXT,
  memory_id TEXT,
  thread_id TEXT,
  root_trace_id TEXT NOT NULL,
  turn_id TEXT,
  run_id TEXT,
  event_id TEXT NOT NULL,
  parent_event_id TEXT,
  kind TEXT NOT NULL,
  stage TEXT NOT NULL,
  coverage_profile TEXT,
  status TEXT NOT NULL,
  tool TEXT,
  success INTEGER,
  store TEXT NOT NULL,
  ts INTEGER NOT NULL,
  started_at INTEGER,
  ended_at INTEGER,
  received_at INTEGER NOT NULL,
  resource_count INTEGER NOT NULL,
  candidate_count INTEGER NOT NULL,
  selected_count INTEGER NOT NULL,
  outcome_verified INTEGER,
  outcome_status TEXT,
  fingerprint TEXT NOT NULL,
  -- JSON of resources, attributes, selection and outcome; last, and never read by summaries.
  meta TEXT NOT NULL
)`;

// Each scope index ends in (ts, seq) so a page is a bounded range scan in keyset order.
// Nullable scopes use partial indexes: rows without the id cost nothing to write.
const EVENT_INDEXES = [
  "CREATE UNIQUE INDEX obs_events_app_event ON obs_events (application_id, event_id)",
  "CREATE INDEX obs_events_time ON obs_events (ts, seq)",
  "CREATE INDEX obs_events_tenant ON obs_events (application_id, ts, seq)",
  "CREATE INDEX obs_events_user ON obs_events (user_id, ts, seq) WHERE user_id IS NOT NULL",
  "CREATE INDEX obs_events_agent ON obs_events (agent_id, ts, seq) WHERE agent_id IS NOT NULL",
  "CREATE INDEX obs_events_memory ON obs_events (memory_id, ts, seq) WHERE memory_id IS NOT NULL",
  "CREATE INDEX obs_events_thread ON obs_events (thread_id, ts, seq) WHERE thread_id IS NOT NULL",
  "CREATE INDEX obs_events_root ON obs_events (root_trace_id, application_id, stage, coverage_profile)",
  "CREATE INDEX obs_events_kind_status ON obs_events (kind, status, ts)",
  "CREATE INDEX obs_events_run ON obs_events (run_id, ts) WHERE run_id IS NOT NULL",
  "CREATE INDEX obs_events_turn ON obs_events (turn_id) WHERE turn_id IS NOT NULL",
  "CREATE INDEX obs_events_event ON obs_events (event_id)",
  `CREATE INDEX obs_events_profile ON obs_events (coverage_profile)
  WHERE coverage_profile IS NOT NULL`,
];

const RESOURCES = `CREATE TABLE obs_resources (
  seq INTEGER NOT NULL REFERENCES obs_events (seq) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  application_id TEXT NOT NULL,
  origin TEXT NOT NULL,
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  version TEXT,
  role TEXT,
  PRIMARY KEY (seq, ordinal)
) WITHOUT ROWID`;

const PREVIEWS = `CREATE TABLE obs_previews (
  seq INTEGER PRIMARY KEY REFERENCES obs_events (seq) ON DELETE CASCADE,
  chars INTEGER NOT NULL,
  truncated INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  -- Last, so reading the small columns never walks the content's overflow pages.
  content TEXT NOT NULL
)`;

const COVERAGE_PROFILES = `CREATE TABLE obs_coverage_profiles (
  name TEXT PRIMARY KEY,
  required TEXT NOT NULL,
  optional TEXT NOT NULL,
  digest TEXT NOT NULL,
  registered_at INTEGER NOT NULL
)`;

const STATE = `CREATE TABLE obs_state (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at INTEGER NOT NULL
)`;

// Version 2: profiles are scoped per application so one tenant cannot replace
// another's. Rows of version 1 become profiles for every application ('').
const TENANT_COVERAGE_PROFILES = [
  `CREATE TABLE obs_coverage_profiles_v2 (
  application_id TEXT NOT NULL,
  name TEXT NOT NULL,
  required TEXT NOT NULL,
  optional TEXT NOT NULL,
  digest TEXT NOT NULL,
  registered_at INTEGER NOT NULL,
  PRIMARY KEY (application_id, name)
)`,
  `INSERT INTO obs_coverage_profiles_v2
  (application_id, name, required, optional, digest, registered_at)
  SELECT '', name, required, optional, digest, registered_at FROM obs_coverage_profiles`,
  "DROP TABLE obs_coverage_profiles",
  "ALTER TABLE obs_coverage_profiles_v2 RENAME TO obs_coverage_profiles",
];

/** One `obs_counts` row a trigger moves: its key and the change, as SQL over NEW or OLD. */
interface CountChange {
  key: string;
  delta: string;
}

function countTrigger(
  name: string,
  when: string,
  changes: CountChange[],
): string {
  const statements = changes.map(({ key, delta }) =>
    `  INSERT INTO obs_counts (key, n) VALUES (${key}, ${delta})
    ON CONFLICT (key) DO UPDATE SET n = n + excluded.n;`
  );
  return `CREATE TRIGGER ${name} ${when}\nBEGIN\n${statements.join("\n")}\nEND`;
}

/** Insert and delete triggers counting the rows of `table` under `key` (`ROW` stands for NEW or OLD). */
function rowCountTriggers(
  row: string,
  table: string,
  counts: { key: string; delta?: string }[],
): string[] {
  const changes = (side: "NEW" | "OLD", sign: "" | "-") =>
    counts.map(({ key, delta }) => ({
      key: key.replaceAll("ROW", side),
      delta: `${sign}(${(delta ?? "1").replaceAll("ROW", side)})`,
    }));
  return [
    countTrigger(
      `obs_counts_${row}_insert`,
      `AFTER INSERT ON ${table}`,
      changes("NEW", ""),
    ),
    countTrigger(
      `obs_counts_${row}_delete`,
      `AFTER DELETE ON ${table}`,
      changes("OLD", "-"),
    ),
  ];
}

// Version 3: row counts kept by triggers, so health reads a few rows at any
// size. Triggers (not the writers) keep them, so every path that writes or
// deletes rows, today's and tomorrow's, keeps them exact; each row costs one
// update of a table of a few rows.
const ROW_COUNTS = [
  `CREATE TABLE obs_counts (
  key TEXT PRIMARY KEY,
  n INTEGER NOT NULL
) WITHOUT ROWID`,
  ...rowCountTriggers("envelope", "obs_envelopes", [{ key: "'envelopes'" }]),
  ...rowCountTriggers("event", "obs_events", [{
    key: "'events.' || ROW.store",
  }]),
  ...rowCountTriggers("resource", "obs_resources", [{ key: "'resources'" }]),
  ...rowCountTriggers("preview", "obs_previews", [
    { key: "'previews'" },
    { key: "'previews.truncated'", delta: "ROW.truncated = 1" },
  ]),
  countTrigger(
    "obs_counts_event_store",
    "AFTER UPDATE OF store ON obs_events",
    [
      { key: "'events.' || OLD.store", delta: "-1" },
      { key: "'events.' || NEW.store", delta: "1" },
    ],
  ),
  `INSERT INTO obs_counts (key, n)
  SELECT 'envelopes', COUNT(*) FROM obs_envelopes
  UNION ALL SELECT 'events.' || store, COUNT(*) FROM obs_events GROUP BY store
  UNION ALL SELECT 'resources', COUNT(*) FROM obs_resources
  UNION ALL SELECT 'previews', COUNT(*) FROM obs_previews
  UNION ALL SELECT 'previews.truncated', COUNT(*) FROM obs_previews WHERE truncated = 1`,
];

// Version 4: one unique index on (event_id, application_id) instead of the
// unique (application_id, event_id) and a second one on event_id alone. With
// event_id first it serves both the ownership check of ingest (tenant and
// id) and the exact id query (`q`, id alone), so each event writes one
// index entry less.
const MERGED_EVENT_ID_INDEX = [
  `CREATE UNIQUE INDEX IF NOT EXISTS obs_events_event_app
  ON obs_events (event_id, application_id)`,
  "DROP INDEX IF EXISTS obs_events_app_event",
  "DROP INDEX IF EXISTS obs_events_event",
];

// Version 5: inserted rows are counted by their writers, one upsert per
// transaction (\`ingest/row_counts.ts\`); a trigger per inserted row cost
// about a tenth of ingest. Deletes and store changes keep their triggers:
// expiry, erasure and cascades delete rows on many paths.
const INSERTS_COUNTED_BY_WRITERS = [
  "envelope",
  "event",
  "resource",
  "preview",
].map((row) => `DROP TRIGGER IF EXISTS obs_counts_${row}_insert`);

// Version 6: an erased event id stays erased. The id itself is not kept:
// only an HMAC of it under a random salt of this database, so whoever holds
// the file can test a guessed id but cannot list them. Tombstones are never
// rewritten or removed (retention keeps them too).
const ERASED_EVENTS = [
  `CREATE TABLE IF NOT EXISTS obs_erased_events (
  application_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (application_id, digest)
) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS obs_erased_events_no_update BEFORE UPDATE ON obs_erased_events
BEGIN
  SELECT RAISE(ABORT, 'obs_erased_events rows are immutable');
END`,
  `CREATE TRIGGER IF NOT EXISTS obs_erased_events_no_delete BEFORE DELETE ON obs_erased_events
BEGIN
  SELECT RAISE(ABORT, 'obs_erased_events rows are never removed');
END`,
  `INSERT INTO obs_state (key, value, updated_at)
  VALUES ('${TOMBSTONE_SALT_KEY}', lower(hex(randomblob(32))),
    CAST(strftime('%s', 'now') AS INTEGER) * 1000)
  ON CONFLICT (key) DO NOTHING`,
];

// Version 7: which archive holds which envelope, one row per envelope and
// location (the location the archive named: an absolute path for the CLI's
// directory archive, '' for an archive that named none). Source expiry
// writes them in one transaction once its archive acknowledges and before
// its first delete, so a file holding envelopes that are still in the
// index (an apply stopped between batches) is recorded too, and so is each
// file of an apply made again. Envelopes expired before have no row: where
// those went was never recorded. A row names a file, never the subject,
// and goes when its event does (an erasure of scope `all`, or retention
// once neither the index row nor the envelope is left).
const ARCHIVED_ENVELOPES = [
  `CREATE TABLE obs_archived_envelopes (
  seq INTEGER NOT NULL,
  location TEXT NOT NULL,
  PRIMARY KEY (seq, location)
) WITHOUT ROWID`,
];

// Also version 7: tombstones are counted in `obs_counts` (`erased_events`)
// as they are written, so health reads their number without scanning them.
// A trigger is cheap here: only an erasure writes tombstones, and never
// removes one, so no delete trigger is needed.
const TOMBSTONE_COUNT = [
  countTrigger(
    "obs_counts_erased_event_insert",
    "AFTER INSERT ON obs_erased_events",
    [{ key: "'erased_events'", delta: "1" }],
  ),
  `INSERT INTO obs_counts (key, n)
  SELECT 'erased_events', COUNT(*) FROM obs_erased_events WHERE true
  ON CONFLICT (key) DO UPDATE SET n = excluded.n`,
];

/** Versioned schema steps of the observability index. */
export const OBS_MIGRATIONS: Migration[] = [
  {
    component: OBS_COMPONENT,
    version: 1,
    name: "observability index",
    statements: [
      ENVELOPES,
      EXPIRY_GRANTS,
      ...ENVELOPE_TRIGGERS,
      EVENTS,
      ...EVENT_INDEXES,
      RESOURCES,
      "CREATE INDEX obs_resources_ref ON obs_resources (id, type, seq)",
      PREVIEWS,
      COVERAGE_PROFILES,
      STATE,
    ],
  },
  {
    component: OBS_COMPONENT,
    version: 2,
    name: "coverage profiles per application",
    statements: TENANT_COVERAGE_PROFILES,
  },
  {
    component: OBS_COMPONENT,
    version: 3,
    name: "row counts kept by triggers",
    statements: ROW_COUNTS,
  },
  {
    component: OBS_COMPONENT,
    version: 4,
    name: "one index for event ids",
    statements: MERGED_EVENT_ID_INDEX,
  },
  {
    component: OBS_COMPONENT,
    version: 5,
    name: "inserted rows counted by their writers",
    statements: INSERTS_COUNTED_BY_WRITERS,
  },
  {
    component: OBS_COMPONENT,
    version: 6,
    name: "tombstones of erased events",
    statements: ERASED_EVENTS,
  },
  {
    component: OBS_COMPONENT,
    version: 7,
    name: "archives holding envelopes, tombstones counted",
    statements: [...ARCHIVED_ENVELOPES, ...TOMBSTONE_COUNT],
  },
];

/** Highest `obs` schema version this build knows. */
export const OBS_SCHEMA_VERSION = Math.max(
  ...OBS_MIGRATIONS.map((m) => m.version),
);

const verified = new WeakSet<TraceDb>();

/** Provisions (or upgrades) the observability tables; returns versions applied now. */
export async function initializeObs(db: TraceDb): Promise<number[]> {
  const applied = await migrate(db, OBS_MIGRATIONS);
  verified.add(db);
  return applied.map((m) => m.version);
}

/** The observability tables are missing or older than this build needs. */
export class ObsNotInitializedError extends StorageError {
  constructor(message: string) {
    super(message);
    this.name = "ObsNotInitializedError";
  }
}

/** Throws {@link ObsNotInitializedError} unless the tables are provisioned at this build's version. */
export async function requireObs(db: TraceDb): Promise<void> {
  // Checked once per connection: the schema is never dropped while it is open.
  if (verified.has(db)) return;
  const version = (await appliedVersions(db)).get(OBS_COMPONENT);
  const where = dbLocation(db);
  if (version === undefined) {
    throw new ObsNotInitializedError(
      `No observability index in ${where} yet; run trace obs init first`,
    );
  }
  refuseNewerSchema(db, OBS_COMPONENT, version, OBS_SCHEMA_VERSION);
  if (version < OBS_SCHEMA_VERSION) {
    throw new ObsNotInitializedError(
      `The observability index in ${where} is at schema version ${version}, this build needs ${OBS_SCHEMA_VERSION}; run trace obs init to upgrade it`,
    );
  }
  verified.add(db);
}
