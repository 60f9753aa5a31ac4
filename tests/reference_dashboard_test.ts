import assert from "node:assert/strict";
import { migrate } from "../lib/db.ts";
import { recordRun } from "../lib/ledger/runs.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import {
  dashboardRow,
  RANKING_RULE,
  rankSystems,
  timeToErasure,
} from "../lib/reference/dashboard.ts";
import {
  latestReferenceRuns,
  listReferenceRuns,
  readReferenceRun,
} from "../lib/reference/history.ts";
import { runReferenceSuite } from "../lib/reference/suite.ts";
import { runReference } from "../lib/runs/reference_runs.ts";
import { findSystem, REFERENCE_SYSTEMS } from "../lib/reference/systems.ts";
import type { Sample } from "../lib/runner/report.ts";
import { withDb } from "./_helpers.ts";

function sample(index: number, at: number): Sample {
  return {
    index,
    started_at_seconds: at,
    ended_at_seconds: at,
    inventory: null,
    marker_seen: null,
    marker_form: null,
    marker_rendering: [],
    control_present: null,
    control_seen: null,
    control_form: null,
    errors: [],
  };
}

Deno.test("timeToErasure() is the first sample from which the series stayed 0", () => {
  const samples = [0, 0.5, 1, 1.5].map((at, i) => sample(i, at));
  assert.equal(timeToErasure(samples, [0, 0, 0, 0]), 0);
  assert.equal(timeToErasure(samples, [2, 1, 0, 0]), 1);
  assert.equal(timeToErasure(samples, [0, 2, 0, 0]), 1);
  assert.equal(timeToErasure(samples, [0, 0, 0, 1]), null);
  assert.equal(timeToErasure(samples, [0, 0, 0, null]), null);
  assert.equal(timeToErasure([], []), null);
});

Deno.test("dashboardRow() and rankSystems() order systems by deletion guarantee", async () => {
  // The demo app's presets are systems too; this ranking covers the others.
  const results = await runReferenceSuite({
    systems: REFERENCE_SYSTEMS.filter((s) => !s.name.startsWith("demo-")),
  });
  const rows = results.map((r) =>
    dashboardRow(findSystem(r.system)!, r.report, r.evaluation)
  );
  const byName = new Map(rows.map((row) => [row.system, row]));
  const stale = byName.get("stale-cache")!;
  assert.equal(stale.families.cache_records.status, "residual");
  assert.equal(stale.families.retrieval.status, "residual");
  assert.equal(stale.families.source_records.status, "erased");
  assert.equal(stale.families.cleanup.status, "incomplete");
  const eventual = byName.get("eventual-vector-propagation")!;
  assert.equal(eventual.families.vector_records.status, "transient");
  assert.equal(eventual.families.vector_records.time_to_erasure_seconds, 2.5);
  assert.equal(eventual.slowest_erasure_seconds, 2.5);
  assert.equal(
    byName.get("control-collateral")!.families.control.status,
    "lost",
  );
  assert.equal(byName.get("control-move")!.families.control.status, "grew");
  assert.notEqual(byName.get("inventory-first-page")!.blind_spot, null);

  const cut = byName.get("interrupted-window")!;
  assert.deepEqual(
    [
      cut.families.vector_records.status,
      cut.families.vector_records.time_to_erasure_seconds,
    ],
    ["interrupted", null],
    "an interrupted window decides nothing, whatever its last sample showed",
  );

  const ranking = rankSystems(rows);
  assert.deepEqual(ranking.map((r) => r.system), [
    "correct",
    "rendered-correct",
    "trace-index",
    "tombstone-window-compaction",
    "eventual-vector-propagation",
    "inventory-first-page",
    "control-collateral",
    "control-move",
    "interrupted-window",
    "paginated-delete",
    "rendered-data-uri",
    "rendered-escaped-json",
    "rendered-full-width",
    "rendered-hex",
    "rendered-hexdump",
    "rendered-homoglyphs",
    "rendered-html",
    "rendered-html-named",
    "rendered-markdown",
    "rendered-od-words",
    "rendered-percent-url",
    "rendered-reworded",
    "rendered-spaced-hex",
    "rendered-wrapped",
    "stale-cache",
    "tombstone-late-compaction",
    "trace-index-skips-previews",
    "worker-resurrect",
  ]);
  assert.deepEqual(
    ranking.map((r) => r.rank),
    Array.from({ length: 28 }, (_, i) => i + 1),
  );
  assert.equal(ranking[5]!.tier, "blind_spot");
  assert.match(RANKING_RULE, /immediate erasure > erasure inside the window/);
});

Deno.test("listReferenceRuns() reads reference history apart from external runs", async () => {
  await withDb(async (db) => {
    assert.deepEqual(await listReferenceRuns(db), []);
    assert.equal(await readReferenceRun(db, "run-x"), null);
    await migrate(db, ALL_MIGRATIONS);
    const correct = findSystem("correct")!;
    const [first] = await runReference(db, { systems: [correct] });
    const [second] = await runReference(db, { systems: [correct] });
    const external = {
      ...first!.report,
      run_id: "run-external-1",
      kind: "external" as const,
      target: {
        id: "cfg-1",
        base_url: "http://127.0.0.1:1",
        source: "config" as const,
      },
    };
    await recordRun(db, external);
    const listed = await listReferenceRuns(db);
    assert.deepEqual(listed.map((e) => e.run_id), [
      second!.report.run_id,
      first!.report.run_id,
    ]);
    assert.ok(listed.every((e) => e.system === "correct"));
    assert.equal(await readReferenceRun(db, "run-external-1"), null);
    const latest = await latestReferenceRuns(db);
    assert.deepEqual([...latest.keys()], ["correct"]);
    assert.equal(latest.get("correct")!.run_id, second!.report.run_id);
    assert.equal(
      (await listReferenceRuns(db, { system: "stale-cache" })).length,
      0,
    );
  });
});
