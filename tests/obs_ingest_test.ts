import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import { StorageError } from "../lib/errors.ts";
import { canonicalJson } from "../lib/canonical_json.ts";
import {
  BULK_CHECKPOINT_EVENTS,
  IngestBatchError,
  IngestConflictError,
  ingestEvents,
  startBackgroundCheckpoints,
  startBulkCheckpoints,
} from "../lib/obs/ingest/mod.ts";
import {
  describeEventIssue,
  EventInputSchema,
  fastValidEvent,
  initializeObs,
  isAllowedAttributeKey,
  listCoverageProfiles,
  normalizeEvent,
  OBS_MIGRATIONS,
  OBS_SCHEMA_VERSION,
  ObsNotInitializedError,
} from "../lib/obs/mod.ts";
import { engineConnection, migrate, type TraceDb } from "../lib/db.ts";
import { queryTraceEvents } from "../lib/obs/query/mod.ts";
import { parity } from "../lib/obs/maint/mod.ts";
import { recordingDb } from "./_obs_recording.ts";
import { type BatchToWrite, planGroup } from "../lib/obs/ingest/_plan.ts";
import { runAtOnce } from "../lib/obs/ingest/_turns.ts";
import * as v from "valibot";

function event(id: string, extra: Record<string, unknown> = {}) {
  return {
    event_id: id,
    application_id: "app-1",
    user_id: "user-1",
    agent_id: "agent-1",
    kind: "retrieval",
    started_at: "2026-09-01T00:00:00Z",
    ...extra,
  };
}

async function count(
  db: Parameters<typeof initializeObs>[0],
  table: string,
): Promise<number> {
  const result = await db.client.execute(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number(result.rows[0]!.n);
}

Deno.test("initializeObs() provisions once and reads never create tables", async () => {
  await withDb(async (db) => {
    await assert.rejects(queryTraceEvents(db, {}), StorageError);
    const tables = await db.client.execute(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'obs_%'",
    );
    assert.equal(tables.rows.length, 0);
    assert.deepEqual(
      await initializeObs(db),
      OBS_MIGRATIONS.map((m) => m.version),
    );
    assert.equal(OBS_MIGRATIONS.at(-1)!.version, OBS_SCHEMA_VERSION);
    assert.deepEqual(await initializeObs(db), []);
    assert.equal((await queryTraceEvents(db, {})).events.length, 0);
  });
});

Deno.test("ingestEvents() writes envelope, index, resources and preview in one batch", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const result = await ingestEvents(db, [
      event("e1", {
        resources: [{ type: "doc", id: "d1" }],
        preview: "secret text",
      }),
      event("e2"),
    ]);
    assert.equal(result.inserted, 2);
    assert.equal(await count(db, "obs_envelopes"), 2);
    assert.equal(await count(db, "obs_events"), 2);
    assert.equal(await count(db, "obs_resources"), 1);
    assert.equal(await count(db, "obs_previews"), 1);
  });
});

Deno.test("ingestEvents() keeps preview content out of envelopes and index rows", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event("e1", { preview: "marker-content-xyz" })]);
    for (const table of ["obs_envelopes", "obs_events", "obs_resources"]) {
      const rows = await db.client.execute(`SELECT * FROM ${table}`);
      assert.ok(
        !JSON.stringify(rows.rows).includes("marker-content-xyz"),
        table,
      );
    }
    const page = await queryTraceEvents(db, {});
    assert.ok(!JSON.stringify(page).includes("marker-content-xyz"));
    assert.deepEqual(page.events[0]!.preview, { chars: 18, truncated: false });
  });
});

Deno.test("ingestEvents() truncates previews at 16,000 characters", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event("e1", { preview: "x".repeat(20_000) })]);
    const row = await db.client.execute(
      "SELECT chars, truncated, length(content) AS n FROM obs_previews",
    );
    assert.deepEqual(
      [row.rows[0]!.chars, row.rows[0]!.truncated, row.rows[0]!.n].map(Number),
      [16_000, 1, 16_000],
    );
  });
});

Deno.test("ingestEvents() treats an identical retry as a no-op keeping the original time", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const input = event("e1", { started_at: undefined });
    delete (input as Record<string, unknown>).started_at;
    const first = await ingestEvents(db, [input], { now: () => 1_000 });
    const retry = await ingestEvents(db, [input], { now: () => 9_000 });
    assert.equal(first.inserted, 1);
    assert.equal(retry.inserted, 0);
    assert.equal(retry.duplicates, 1);
    assert.equal(retry.items[0]!.seq, first.items[0]!.seq);
    const page = await queryTraceEvents(db, {});
    assert.equal(page.events.length, 1);
    assert.equal(page.events[0]!.received_at, new Date(1_000).toISOString());
    assert.equal(page.events[0]!.ts, new Date(1_000).toISOString());
  });
});

Deno.test("ingestEvents() refuses a changed payload under an owned event_id", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event("e1")]);
    const error = await ingestEvents(db, [
      event("e2"),
      event("e1", { status: "error" }),
    ])
      .catch((e) => e);
    assert.ok(error instanceof IngestConflictError);
    assert.equal(error.items[0]!.index, 1);
    assert.equal(
      await count(db, "obs_events"),
      1,
      "the whole batch was refused",
    );
  });
});

Deno.test("ingestEvents() scopes event ids per application", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event("e1")]);
    const other = await ingestEvents(db, [
      event("e1", { application_id: "app-2", status: "ok" }),
    ]);
    assert.equal(other.inserted, 1);
  });
});

Deno.test("ingestEvents() refuses a batch with one invalid item and writes nothing", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const error = await ingestEvents(db, [
      event("e1"),
      event("e2", { started_at: "yesterday" }),
      event("e3", { agent_id: undefined }),
    ]).catch((e) => e);
    assert.ok(error instanceof IngestBatchError);
    assert.deepEqual(error.items.map((item) => item.index), [1, 2]);
    assert.equal(error.items[0]!.field, "started_at");
    assert.match(error.items[1]!.message, /agent_id or memory_id is required/);
    assert.equal(await count(db, "obs_events"), 0);
    assert.equal(await count(db, "obs_envelopes"), 0);
  });
});

Deno.test("EventInputSchema refuses more than 64 selection candidates", () => {
  const candidate = (i: number) => ({
    ref: { type: "doc", id: `d${i}` },
    rank: i,
    selected: i < 3,
    reason: i < 3 ? "mmr_rank" : "budget_exhausted",
  });
  const ok = event("e1", {
    selection: {
      candidates: Array.from({ length: 64 }, (_, i) => candidate(i)),
    },
  });
  const tooMany = event("e1", {
    selection: {
      candidates: Array.from({ length: 65 }, (_, i) => candidate(i)),
    },
  });
  assert.equal(v.safeParse(EventInputSchema, ok).success, true);
  const parsed = v.safeParse(EventInputSchema, tooMany);
  assert.equal(parsed.success, false);
  assert.match(parsed.issues?.[0]?.message ?? "", /at most 64 candidates/);
});

Deno.test("EventInputSchema refuses attributes outside the allowlist and unknown keys", () => {
  assert.equal(isAllowedAttributeKey("gen_ai.request.model"), true);
  assert.equal(isAllowedAttributeKey("app.tier"), true);
  assert.equal(isAllowedAttributeKey("gen_ai.input.messages"), false);
  const content = v.safeParse(
    EventInputSchema,
    event("e1", { attributes: { "gen_ai.input.messages": "hi" } }),
  );
  assert.equal(content.success, false);
  const unknown = v.safeParse(EventInputSchema, event("e1", { text: "hi" }));
  assert.equal(unknown.success, false);
});

Deno.test("EventInputSchema refuses a count attribute that is not a whole number of 0 or more", () => {
  for (const value of ["ten", -5, 1.5, 2 ** 53, true]) {
    for (const key of ["gen_ai.usage.input_tokens", "retrieval.top_k"]) {
      const label = `${key} = ${JSON.stringify(value)}`;
      assert.deepEqual(
        normalizeEvent(event("e1", { attributes: { [key]: value } }), 0),
        {
          index: 0,
          field: `attributes.${key}`,
          message: "must be a whole number of 0 or more, or null",
        },
        label,
      );
    }
  }
  // A count, a null (not known) and any value under another key stay accepted.
  const accepted = normalizeEvent(
    event("e1", {
      attributes: {
        "gen_ai.usage.input_tokens": 0,
        "gen_ai.usage.output_tokens": null,
        "gen_ai.request.model": "m",
        "app.delta": -5,
      },
    }),
    0,
  );
  assert.ok("fingerprint" in accepted);
});

Deno.test("docs/observability.md has one row of its event field table for each key of EventInputSchema", async () => {
  const docs = await Deno.readTextFile(
    new URL("../docs/observability.md", import.meta.url),
  );
  const start = docs.indexOf("### Event fields");
  assert.ok(start >= 0, 'no "### Event fields" part');
  const part = docs.slice(start, docs.indexOf("\n#", start + 1));
  // The first cell of each row after the header and its rule: `field`.
  const documented = [...part.matchAll(/^\| `([a-z_]+)` +\|/gm)].map((m) =>
    m[1]!
  );
  const keys = Object.keys(EventInputSchema.pipe[0].entries);
  assert.deepEqual([...documented].sort(), [...keys].sort());
  assert.equal(new Set(documented).size, documented.length, "no field twice");
});

Deno.test("envelope triggers refuse UPDATE and unreviewed DELETE", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [event("e1")]);
    await assert.rejects(
      db.client.execute("UPDATE obs_envelopes SET store = 'tool_log'"),
      /immutable/,
    );
    await assert.rejects(
      db.client.execute("DELETE FROM obs_envelopes"),
      /reviewed source expiry/,
    );
    assert.equal(await count(db, "obs_envelopes"), 1);
  });
});

Deno.test("normalizeEvent() envelope bodies are canonical JSON", () => {
  const result = normalizeEvent(
    event("e1", {
      attributes: { "app.z": 1, "app.a": "x" },
      resources: [{ role: "retrieved", id: "d1", type: "doc", version: "3" }],
      outcome: {
        status: "success",
        verified: true,
        artifact: { type: "doc", id: "a" },
      },
      selection: {
        strategy: "mmr",
        candidates: [{
          selected: true,
          reason: "mmr_rank",
          ref: { type: "doc", id: "d1" },
          score: 0.5,
        }],
      },
      preview: "text",
    }),
    0,
  );
  assert.ok("body" in result);
  assert.equal(result.body, canonicalJson(JSON.parse(result.body)));
  assert.ok(!result.body.includes('"text"'));
});

Deno.test("ingestEvents() names both items when one batch repeats an id with another payload", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const error = await ingestEvents(db, [
      event("e0"),
      event("e1"),
      event("e1", { status: "error" }),
    ]).catch((e) => e);
    assert.ok(error instanceof IngestConflictError);
    assert.match(
      error.message,
      /item 2: event_id: "e1" is repeated in this batch with a different payload \(items 1 and 2\)/,
    );
    assert.doesNotMatch(error.message, /already stored/);
    assert.equal(await count(db, "obs_events"), 0);
    const identical = await ingestEvents(db, [event("e1"), event("e1")]);
    assert.deepEqual([identical.inserted, identical.duplicates], [1, 1]);
  });
});

Deno.test("ingestEvents() reports source lines when given and refuses non-object items", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const error = await ingestEvents(
      db,
      [event("e1"), [event("e2")], event("e3", { kind: "Bad" })],
      { lines: [2, 5, 9] },
    ).catch((e) => e);
    assert.ok(error instanceof IngestBatchError);
    assert.deepEqual(error.items.map(describeEventIssue), [
      "line 5: must be a JSON object",
      "line 9: kind: must be a lower-case token (a-z, 0-9, _ . : -), at most 64 characters",
    ]);
    assert.match(error.message, /\(line 5: must be a JSON object\)/);
    const unnumbered = await ingestEvents(db, [null]).catch((e) => e);
    assert.match(unnumbered.message, /item 0: must be a JSON object/);
  });
});

Deno.test("ingestEvents() accepts an empty batch without writing", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    assert.deepEqual(await ingestEvents(db, []), {
      inserted: 0,
      duplicates: 0,
      items: [],
    });
  });
});

Deno.test("initializeObs() upgrades version 1 coverage profiles to apply to every application", async () => {
  await withDb(async (db) => {
    await migrate(db, OBS_MIGRATIONS.filter((m) => m.version === 1));
    await db.client.execute(
      `INSERT INTO obs_coverage_profiles (name, required, optional, digest, registered_at)
       VALUES ('doc_flow', '["intent"]', '[]', 'd', 0)`,
    );
    await assert.rejects(
      queryTraceEvents(db, {}),
      (error: Error) =>
        error instanceof ObsNotInitializedError &&
        error.message.includes(
          `schema version 1, this build needs ${OBS_SCHEMA_VERSION}; run trace obs init`,
        ),
    );
    assert.deepEqual(await initializeObs(db), [2, 3, 4, 5, 6, 7]);
    const [profile] = await listCoverageProfiles(db);
    assert.equal(profile!.application_id, null);
    assert.equal(profile!.name, "doc_flow");
    assert.deepEqual(profile!.required, ["intent"]);
  });
});

// ---- the validation fast path ----

/** Events the fast path should recognise: every field, every default, nulls, other time forms. */
const FAST_PATH_BASES: Record<string, unknown>[] = [
  {
    event_id: "b1-c2",
    application_id: "bench-app",
    user_id: "user-1",
    agent_id: "agent-1",
    thread_id: "thread-1",
    root_trace_id: "b1-root",
    parent_event_id: "b1-root",
    kind: "memory_search",
    status: "ok",
    started_at: "2026-09-01T00:00:00.010Z",
    ended_at: "2026-09-01T00:00:00.015Z",
    resources: [{ type: "doc", id: "doc-7", role: "retrieved" }],
    attributes: { "gen_ai.operation.name": "search_memory" },
  },
  { event_id: "m", application_id: "a", memory_id: "mem", kind: "intent" },
  {
    event_id: "full",
    application_id: "app-1",
    memory_id: "mem-1",
    turn_id: "turn-1",
    run_id: "run-1",
    kind: "tool_call",
    tool: "search",
    success: true,
    stage: "retrieval",
    coverage_profile: "doc_flow",
    store: "conversation",
    started_at: "2026-09-01T12:00:00+02:00",
    ended_at: "2026-09-01T12:00:01Z",
    resources: [
      { role: "supplied", version: "3", id: "d1", type: "doc" },
      { type: "memory", id: "m1" },
    ],
    attributes: {
      "app.z": 1,
      "app.a": "x",
      "gen_ai.request.model": "m",
      "retrieval.top_k": 5,
      "app.flag": false,
      "app.none": null,
    },
    selection: {
      omitted_candidates: 2,
      candidates: [
        {
          selected: true,
          reason: "mmr_rank",
          ref: { type: "doc", id: "d1" },
          score: 0.5,
          rank: 0,
        },
        {
          ref: { id: "d2", type: "doc", role: "retrieved" },
          rank: null,
          score: null,
          selected: false,
          reason: "budget_exhausted",
        },
      ],
      strategy: "mmr",
    },
    outcome: {
      artifact: { type: "doc", id: "a" },
      code: "ok",
      status: "success",
      verified: true,
    },
    preview: "some text",
  },
  {
    event_id: "nulls",
    application_id: "a",
    user_id: null,
    agent_id: "x",
    memory_id: null,
    thread_id: null,
    root_trace_id: null,
    turn_id: null,
    run_id: null,
    parent_event_id: null,
    kind: "llm_call",
    stage: null,
    coverage_profile: null,
    tool: null,
    success: null,
    started_at: null,
    ended_at: null,
    selection: null,
    outcome: null,
    preview: null,
    resources: [],
    attributes: {},
  },
];

const REMOVE = Symbol("remove");

/** Values every field is set to in turn: wrong types, bounds, odd strings and times. */
const ODD_VALUES: unknown[] = [
  REMOVE,
  undefined,
  null,
  "",
  "x",
  "X",
  ".",
  "..",
  "a".repeat(257),
  "a".repeat(129),
  "a\u0000b",
  "\ud800",
  "a\u202eb",
  "a\u0085b",
  0,
  -0,
  -1,
  1.5,
  NaN,
  Infinity,
  2 ** 53,
  true,
  false,
  [],
  {},
  ["x"],
  { type: "doc" },
  { type: "doc", id: "d" },
  "2026-02-29T00:00:00.000Z",
  "2028-02-29T00:00:00.000Z",
  "2026-09-01T00:00:00Z",
  "2026-09-01T00:00:00.000Z",
  "2026-09-01T24:00:00.000Z",
  "2026-09-01T00:60:00.000Z",
  "0070-01-01T00:00:00.000Z",
  "2101-01-01T00:00:00.000Z",
  "1969-12-31T23:59:59.999Z",
  "1970-01-01T00:00:00.000Z",
  "2026-09-01T00:00:00.000+02:00",
  "2026-9-01T00:00:00.000Z",
  "error",
  "ok",
  "trace",
  "retrieved",
  "mmr_rank",
  "success",
];

/** Field paths of the bases that the odd values replace. */
const ODD_PATHS: (string | number)[][] = [
  ...Object.keys(FAST_PATH_BASES[2]!).map((key) => [key]),
  ...[
    "user_id",
    "agent_id",
    "thread_id",
    "root_trace_id",
    "parent_event_id",
    "status",
    "extra",
  ].map((key) => [key]),
  ...["type", "id", "version", "role", "extra"].map((k) => ["resources", 0, k]),
  ["resources", 1],
  ["resources", 2],
  ...[
    "app.a",
    "app.b",
    "bad key",
    "gen_ai.input.messages",
    "__proto__",
    "gen_ai.usage.input_tokens",
  ].map((k) => ["attributes", k]),
  ...["strategy", "candidates", "omitted_candidates", "extra"].map((k) => [
    "selection",
    k,
  ]),
  ...["ref", "rank", "score", "selected", "reason", "extra"].map((k) => [
    "selection",
    "candidates",
    0,
    k,
  ]),
  ["selection", "candidates", 0, "ref", "id"],
  ...["verified", "status", "code", "artifact", "extra"].map((k) => [
    "outcome",
    k,
  ]),
  ["outcome", "artifact", "type"],
];

function withValue(
  base: Record<string, unknown>,
  path: (string | number)[],
  value: unknown,
): unknown {
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) {
    const next = at[key];
    if (next === null || typeof next !== "object") return null;
    at = next as Record<string | number, unknown>;
  }
  const last = path.at(-1)!;
  if (value === REMOVE) delete at[last];
  else if (last === "__proto__") {
    Object.defineProperty(at, last, {
      value,
      enumerable: true,
      configurable: true,
      writable: true,
    });
  } else at[last] = value;
  return copy;
}

function fastPathCases(): unknown[] {
  const cases: unknown[] = [...FAST_PATH_BASES];
  for (const base of FAST_PATH_BASES) {
    for (const path of ODD_PATHS) {
      for (const value of ODD_VALUES) {
        const input = withValue(base, path, value);
        if (input !== null) cases.push(input);
      }
    }
  }
  // Objects that are not plain: the fast path leaves them to the schema.
  cases.push(Object.assign(Object.create({ kind: "intent" }), {
    event_id: "e",
    application_id: "a",
    agent_id: "x",
  }));
  cases.push(Object.assign(Object.create(null), FAST_PATH_BASES[1]));
  cases.push(
    JSON.parse(
      '{"event_id":"e","application_id":"a","agent_id":"x","kind":"k","__proto__":{}}',
    ),
  );
  return cases;
}

Deno.test("fastValidEvent() accepts only what EventInputSchema accepts, with the same output", () => {
  let accepted = 0;
  for (const input of fastPathCases()) {
    const fast = fastValidEvent(input);
    const schema = v.safeParse(EventInputSchema, input);
    const label = JSON.stringify(input) ?? String(input);
    if (fast !== null) {
      accepted++;
      assert.ok(schema.success, `the schema refuses ${label}`);
      assert.deepStrictEqual(fast, schema.output, label);
      // Nested objects are stored as JSON: their key order matters too.
      for (const key of ["resources", "attributes", "selection", "outcome"]) {
        assert.equal(
          JSON.stringify((fast as Record<string, unknown>)[key]),
          JSON.stringify((schema.output as Record<string, unknown>)[key]),
          `${key} of ${label}`,
        );
      }
    }
    assert.deepStrictEqual(
      normalizeEvent(input, 0),
      normalizeEvent(input, 0, { schemaOnly: true }),
      label,
    );
  }
  for (const base of FAST_PATH_BASES) {
    assert.notEqual(fastValidEvent(base), null, JSON.stringify(base));
  }
  assert.ok(accepted > 500, `the fast path recognised only ${accepted} cases`);
});

Deno.test("normalizeEvent() words every refusal itself, never in valibot's default words", () => {
  for (const input of fastPathCases()) {
    const result = normalizeEvent(input, 0);
    if ("fingerprint" in result) continue;
    assert.doesNotMatch(
      result.message,
      /^Invalid |Expected /,
      `${JSON.stringify(input)} is refused with ${result.message}`,
    );
  }
});

// ---- roots of children that name none ----

/** Root of every stored event, by event id, read from the index and the envelopes alike. */
async function storedRootsOf(
  db: TraceDb,
): Promise<Record<string, [string, string]>> {
  const rows = await db.client.execute(
    `SELECT e.event_id, e.root_trace_id,
            json_extract(v.body, '$.event.root_trace_id') AS enveloped
       FROM obs_events e JOIN obs_envelopes v USING (seq) ORDER BY e.seq`,
  );
  return Object.fromEntries(
    rows.rows.map((row) => [
      String(row.event_id),
      [String(row.root_trace_id), String(row.enveloped)],
    ]),
  );
}

const child = (id: string, parent: string, extra = {}) =>
  event(id, { parent_event_id: parent, ...extra });

Deno.test("ingestEvents() files a child without a root under its parent's root, found in its batch in any order", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [
      child("grandchild", "child"),
      child("child", "parent"),
      event("parent", { root_trace_id: "task-1" }),
      child("orphan", "never-sent"),
      child("own-root", "parent", { root_trace_id: "task-2" }),
      child("loop-b", "loop-a"),
      child("loop-a", "loop-b"),
    ]);
    assert.deepEqual(await storedRootsOf(db), {
      grandchild: ["task-1", "task-1"],
      child: ["task-1", "task-1"],
      parent: ["task-1", "task-1"],
      orphan: ["orphan", "orphan"],
      "own-root": ["task-2", "task-2"],
      "loop-b": ["loop-a", "loop-a"],
      "loop-a": ["loop-a", "loop-a"],
    });
    const task = await queryTraceEvents(db, { root_trace_id: "task-1" });
    assert.deepEqual(
      task.events.map((e) => e.event_id).sort(),
      ["child", "grandchild", "parent"],
    );
    assert.equal((await parity(db)).status, "ok");
  });
});

Deno.test("ingestEvents() files a child without a root under its stored parent's root, and a resend stays as stored", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    // Sent before its parent: nothing names its root yet.
    await ingestEvents(db, [child("early", "parent")]);
    await ingestEvents(db, [event("parent", { root_trace_id: "task-1" })]);
    const later = await ingestEvents(db, [
      child("late", "parent"),
      child("late-grandchild", "late"),
    ]);
    assert.equal(later.inserted, 2);
    // A resend of the early child is the identical retry it was, not a conflict.
    const resend = await ingestEvents(db, [child("early", "parent")]);
    assert.deepEqual([resend.inserted, resend.duplicates], [0, 1]);
    assert.deepEqual(await storedRootsOf(db), {
      early: ["early", "early"],
      parent: ["task-1", "task-1"],
      late: ["task-1", "task-1"],
      "late-grandchild": ["task-1", "task-1"],
    });
    // And a changed payload is still refused.
    await assert.rejects(
      ingestEvents(db, [child("late", "parent", { status: "error" })]),
      IngestConflictError,
    );
  });
});

Deno.test("planGroup() files a rootless child as if the group's batches were written in turn: under a parent of an earlier batch, not of a later one", () => {
  const batch = (...inputs: Record<string, unknown>[]): BatchToWrite => ({
    events: inputs.map((input, index) => {
      const normalized = normalizeEvent(input, index);
      assert.ok("meta" in normalized, JSON.stringify(normalized));
      return normalized;
    }),
    receivedAt: 0,
    source: "test",
    lines: undefined,
  });
  const { plans } = runAtOnce(planGroup(
    [
      batch(event("p1", { root_trace_id: "task-1" })),
      batch(child("c1", "p1"), child("c2", "p2")),
      batch(event("p2", { root_trace_id: "task-2" })),
    ],
    new Map(),
    1,
    new Map(),
  ));
  const roots = Object.fromEntries(
    plans.flatMap((plan) => plan.fresh).map(({ event }) => [
      event.meta.event_id,
      [event.meta.root_trace_id, JSON.parse(event.body).event.root_trace_id],
    ]),
  );
  assert.deepEqual(roots, {
    p1: ["task-1", "task-1"],
    c1: ["task-1", "task-1"],
    c2: ["c2", "c2"],
    p2: ["task-2", "task-2"],
  });
});

// ---- group commit and ownership ----

Deno.test("ingestEvents() commits concurrent batches together, each deciding as if written in turn", async () => {
  await withDb(async (base) => {
    await initializeObs(base);
    await ingestEvents(base, [event("stored")]);
    // A copy with another client writes through that client: its transactions are counted.
    const { db, client } = recordingDb(base);
    const before = client.transactions;
    const settled = await Promise.allSettled([
      ingestEvents(db, [event("x1"), event("x2")]),
      ingestEvents(db, [event("x2"), event("x3")]),
      ingestEvents(db, [event("stored", { status: "error" }), event("x4")]),
      ingestEvents(db, [event("x4"), event("x5"), event("x5")]),
      ingestEvents(db, [event("x6")]),
    ]);
    const [first, second, refused, fourth, fifth] = settled;
    assert.ok(first.status === "fulfilled" && second.status === "fulfilled");
    assert.ok(fourth.status === "fulfilled" && fifth.status === "fulfilled");
    assert.equal(refused.status, "rejected");
    assert.ok(refused.reason instanceof IngestConflictError);
    assert.match(refused.reason.message, /"stored" is already stored/);
    assert.deepEqual(
      [first.value.inserted, second.value.inserted, fourth.value.inserted],
      [2, 1, 2],
    );
    // The repeat of x2 in a later batch of the group is an identical retry.
    assert.deepEqual(second.value.items[0], {
      index: 0,
      event_id: "x2",
      seq: first.value.items[1]!.seq,
      duplicate: true,
    });
    // The refused batch claimed nothing: x4 belongs to the batch after it.
    assert.equal(fourth.value.items[0]!.duplicate, false);
    assert.equal(fourth.value.items[2]!.duplicate, true);
    const seqs = [first, second, fourth, fifth].flatMap((s) =>
      s.status === "fulfilled" ? s.value.items.map((item) => item.seq) : []
    );
    assert.equal(new Set(seqs).size, 6, "six distinct events");
    assert.equal(await count(base, "obs_events"), 7);
    assert.equal(await count(base, "obs_envelopes"), 7);
    assert.ok(
      client.transactions > before,
      "the batches wrote through the client",
    );
    assert.ok(
      client.transactions - before < 5,
      `${client.transactions - before} transactions for 5 concurrent batches`,
    );
  });
});

Deno.test("ingestEvents() fails a batch whose write fails alone, not the batches committed with it", async () => {
  await withDb(async (base) => {
    await initializeObs(base);
    await base.client.execute(
      `CREATE TRIGGER test_refuse BEFORE INSERT ON obs_events
      WHEN NEW.event_id = 'boom' BEGIN SELECT RAISE(ABORT, 'refused by test'); END`,
    );
    const settled = await Promise.allSettled([
      ingestEvents(base, [event("a1")]),
      ingestEvents(base, [event("b1"), event("b2")]),
      ingestEvents(base, [event("c1"), event("boom")]),
      ingestEvents(base, [event("d1")]),
    ]);
    assert.deepEqual(settled.map((s) => s.status), [
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    const failed = settled[2] as PromiseRejectedResult;
    assert.ok(failed.reason instanceof StorageError);
    const ids = await base.client.execute(
      "SELECT event_id FROM obs_envelopes ORDER BY event_id",
    );
    assert.deepEqual(ids.rows.map((row) => row.event_id), [
      "a1",
      "b1",
      "b2",
      "d1",
    ]);
  });
});

Deno.test("ingestEvents() lets an index row or an envelope alone keep owning its event id", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const first = await ingestEvents(db, [event("rows"), event("source")]);
    const [rowsSeq, sourceSeq] = first.items.map((item) => item.seq);
    // Source expiry removed the envelope of one, retention the index row of the other.
    await db.client.execute({
      sql: `INSERT INTO obs_expiry_grants (seq, fingerprint, granted_at)
            SELECT seq, fingerprint, 0 FROM obs_envelopes WHERE seq = ?`,
      args: [rowsSeq!],
    });
    await db.client.execute({
      sql: "DELETE FROM obs_envelopes WHERE seq = ?",
      args: [rowsSeq!],
    });
    await db.client.execute({
      sql: "DELETE FROM obs_resources WHERE seq = ?",
      args: [sourceSeq!],
    });
    await db.client.execute({
      sql: "DELETE FROM obs_events WHERE seq = ?",
      args: [sourceSeq!],
    });
    for (const id of ["rows", "source"]) {
      const changed = await ingestEvents(db, [
        event("fresh-" + id),
        event(id, { status: "error" }),
      ]).catch((e) => e);
      assert.ok(changed instanceof IngestConflictError, id);
      assert.match(changed.message, /already stored with a different payload/);
      const retry = await ingestEvents(db, [event(id)]);
      assert.deepEqual(retry.items[0]!.duplicate, true, id);
    }
    // Neither a refused batch nor an identical retry wrote a row.
    assert.equal(await count(db, "obs_events"), 1);
    assert.equal(await count(db, "obs_envelopes"), 1);
  });
});

Deno.test("startBackgroundCheckpoints() copies the WAL into the file from a worker thread", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await db.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const before = (await Deno.stat(db.path!)).size;
    const checkpoints = startBackgroundCheckpoints(db);
    try {
      // Below the writer's own bound, which the worker raises.
      await ingestTwoMegabytes(db);
      assert.equal(await autocheckpointPages(db), 16_384);
    } finally {
      await checkpoints.stop();
    }
    const after = (await Deno.stat(db.path!)).size;
    assert.ok(after > before + 1_000_000, `file ${before} -> ${after} bytes`);
    await ingestEvents(db, [event("after-stop")]);
    assert.equal(await autocheckpointPages(db), 1_000);
  });
});

Deno.test("startBulkCheckpoints() starts a worker only for a write of 20,000 events or more", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const small = startBulkCheckpoints(db, BULK_CHECKPOINT_EVENTS - 1);
    try {
      await ingestEvents(db, [event("small")]);
      assert.equal(await autocheckpointPages(db), 1_000);
    } finally {
      await small.stop();
    }
    const large = startBulkCheckpoints(db, BULK_CHECKPOINT_EVENTS);
    try {
      await ingestEvents(db, [event("large")]);
      assert.equal(await autocheckpointPages(db), 16_384);
    } finally {
      await large.stop();
    }
  });
});

Deno.test("without background checkpoints a small WAL stays in the WAL", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await db.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const before = (await Deno.stat(db.path!)).size;
    await ingestTwoMegabytes(db);
    assert.equal((await Deno.stat(db.path!)).size, before);
  });
});

/** Four batches of 250 events with 1,000-character previews: about 2 MB of WAL. */
async function ingestTwoMegabytes(db: TraceDb): Promise<void> {
  for (let b = 0; b < 4; b++) {
    await ingestEvents(
      db,
      Array.from(
        { length: 250 },
        (_, i) => event(`b${b}-${i}`, { preview: "x".repeat(1_000) }),
      ),
    );
  }
}

/** The WAL bound of the connection ingest writes through (its engine connection on a local file). */
async function autocheckpointPages(db: TraceDb): Promise<number> {
  const engine = await engineConnection(db);
  assert.ok(engine, "a local file is written through its engine connection");
  return Number(Object.values(engine.all("PRAGMA wal_autocheckpoint")[0]!)[0]);
}

Deno.test("ingestEvents() stores quotes, SQL, NUL and other characters exactly as sent", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const tricky = "o'brien'); DROP TABLE obs_events; -- \\ \" 🚀 ü";
    const preview = `a'b\u0000c\nd''e\r\n${tricky}`;
    await ingestEvents(db, [
      event(tricky, {
        thread_id: "'",
        attributes: { "app.note": `line\none\u0000'${tricky}` },
        resources: [{ type: "doc", id: tricky }],
        preview,
      }),
    ]);
    const page = await queryTraceEvents(db, { thread_id: "'" });
    assert.equal(page.events.length, 1);
    const stored = page.events[0]!;
    assert.equal(stored.event_id, tricky);
    assert.deepEqual(stored.attributes, {
      "app.note": `line\none\u0000'${tricky}`,
    });
    assert.deepEqual(stored.resources, [{ type: "doc", id: tricky }]);
    const content = await db.client.execute(
      "SELECT content, hex(content) AS bytes FROM obs_previews",
    );
    assert.equal(
      String(content.rows[0]!.bytes),
      Array.from(new TextEncoder().encode(preview))
        .map((b) => b.toString(16).padStart(2, "0").toUpperCase()).join(""),
    );
    // The stored envelope and rows agree field by field.
    const check = await parity(db);
    assert.equal(check.status, "ok");
    assert.equal(await count(db, "obs_events"), 1);
  });
});
