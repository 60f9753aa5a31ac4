/**
 * Counts the test inventory answers beside the contract's four: a note that
 * names the keys that are field names and counts the others, never a change
 * of verdict, and never a key or value kept in the report's samples.
 */

import assert from "node:assert/strict";
import { renderReport } from "../cli/_report_text.ts";
import { renderJunit } from "../lib/render/junit.ts";
import { renderSummaryMarkdown } from "../lib/render/summary_md.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { keptReportProblem } from "../lib/runs/kept_report.ts";
import {
  findingsOf,
  type InterceptedRequest,
  runFake,
} from "./_fake_target.ts";

/** The default fake run samples at 0, 0.5, 1, 1.5 and 2 s. */
const LAST = 4;

/** A run whose test inventory adds `extra` to every answer the filter picks. */
function runWithExtra(
  extra: Record<string, unknown>,
  picks: (request: InterceptedRequest) => boolean = () => true,
) {
  return runFake({
    hook: async (request, forward) => {
      const answer = await forward();
      return request.op === "inventory" && request.role === "test" &&
          picks(request)
        ? { ...answer, ...extra }
        : answer;
    },
  });
}

function unreadNote(report: RunReport) {
  return report.findings.find((f) => f.code === "unread_inventory_count");
}

Deno.test("a fourth count beside three zeros gets a PASS with a note naming it", async () => {
  const { report } = await runWithExtra({ history_records: 3 });
  assert.equal(report.verdict, "PASS");
  assert.deepEqual(findingsOf(report, "note"), [
    "unread_inventory_count:inventory",
    "erased:deletion",
  ]);
  const note = unreadNote(report)!;
  assert.equal(
    note.message,
    "The test inventory also answered history_records (3 at the final sample), which Trace does not count: count every store of your application in source_records, vector_records or cache_records, or Trace cannot see what it keeps",
  );
  assert.deepEqual(note.sample_indexes, [0, 1, 2, 3, LAST]);
  // The samples keep the contract's counts only.
  assert.deepEqual(Object.keys(report.samples[LAST]!.inventory!), [
    "complete",
    "source_records",
    "vector_records",
    "cache_records",
  ]);
});

Deno.test("a count seen only at the baseline or only in one sample says where", async (t) => {
  await t.step("baseline", async () => {
    const { report } = await runWithExtra(
      { audit_rows: 2 },
      (r) => r.stage === "setup",
    );
    assert.equal(report.verdict, "PASS");
    assert.match(
      unreadNote(report)!.message,
      /audit_rows \(2 at the baseline\)/,
    );
    assert.deepEqual(unreadNote(report)!.sample_indexes, []);
  });
  await t.step("a sample before the final one", async () => {
    const { report } = await runWithExtra(
      { audit_rows: 1 },
      (r) => r.stage === "window" && r.sample === 2,
    );
    assert.match(
      unreadNote(report)!.message,
      /audit_rows \(1 at sample #2 \(1\.00 s\)\)/,
    );
    assert.deepEqual(unreadNote(report)!.sample_indexes, [2]);
  });
  await t.step("cleanup", async () => {
    const { report } = await runWithExtra(
      { audit_rows: 4 },
      (r) => r.stage === "cleanup",
    );
    assert.match(unreadNote(report)!.message, /audit_rows \(4 at cleanup\)/);
  });
});

Deno.test("a nested breakdown, zeros and values that are not counts raise nothing", async (t) => {
  const cases: [string, Record<string, unknown>][] = [
    ["stores object", {
      stores: { vector_rows: 3, history_rows: 2, message_rows: 1 },
    }],
    ["zero", { history_records: 0 }],
    ["float", { history_records: 1.5 }],
    ["string", { history_records: "3" }],
    ["boolean", { history_records: true }],
    ["negative", { history_records: -1 }],
    ["array", { history_records: [3] }],
    ["past 2^53", { history_records: 2 ** 60 }],
  ];
  for (const [name, extra] of cases) {
    await t.step(name, async () => {
      const { report } = await runWithExtra(extra);
      assert.equal(report.verdict, "PASS");
      assert.deepEqual(findingsOf(report, "note"), ["erased:deletion"]);
    });
  }
});

Deno.test("a key that is not a field name is counted, never named", async () => {
  const { report } = await runWithExtra({
    "alice@example.com": 3,
    "sk-secret token": 1,
  });
  const note = unreadNote(report)!;
  assert.match(
    note.message,
    /^The test inventory also answered counts under 2 keys that are not field names, which Trace does not count/,
  );
  const text = JSON.stringify(report);
  assert.ok(!text.includes("alice"), text);
  assert.ok(!text.includes("secret"), text);

  const mixed = await runWithExtra({ history_records: 3, "a b": 1 });
  assert.match(
    unreadNote(mixed.report)!.message,
    /answered history_records \(3 at the final sample\) and 1 other key, which/,
  );
});

Deno.test("many extra counts name the first five and count the rest", async () => {
  const extra = Object.fromEntries(
    Array.from({ length: 7 }, (_, i) => [`store_${i}`, i + 1]),
  );
  const { report } = await runWithExtra({ ...extra, "not a name": 1 });
  assert.match(
    unreadNote(report)!.message,
    /answered store_0 \(1 at the final sample\), store_1 \(2 at the final sample\), store_2 \(3 at the final sample\), store_3 \(4 at the final sample\), store_4 \(5 at the final sample\) and 3 other keys, which/,
  );
});

Deno.test("the note leaves a FAIL a FAIL and is listed beside it", async () => {
  const { report } = await runWithExtra(
    { cache_records: 1, history_records: 3 },
    (r) => r.stage === "window",
  );
  assert.equal(report.verdict, "FAIL");
  assert.deepEqual(findingsOf(report, "note"), [
    "unread_inventory_count:inventory",
  ]);
});

Deno.test("the terminal report, the summary and JUnit show the note", async () => {
  const { report } = await runWithExtra({ history_records: 3 });
  const text = renderReport(report);
  assert.match(
    text,
    /\n {2}note +The test inventory also answered history_records \(3 at the final sample\)/,
  );
  const summary = renderSummaryMarkdown(report, { replayCommand: null });
  assert.match(
    summary,
    /- note \(does not change the verdict\) `unread_inventory_count` \(inventory\): The test inventory also answered history\\_records/,
  );
  const junit = renderJunit(report);
  const notes = junit.match(/<system-out>The test inventory also answered/g);
  // One per store family, whose checks passed without the store.
  assert.equal(notes?.length, 3, junit);
  assert.doesNotMatch(junit, /<failure|<error/);
});

Deno.test("a report kept with the note is judged again as its evidence gives", async () => {
  const { report } = await runWithExtra({ history_records: 3 });
  assert.equal(keptReportProblem(report), null);
});

Deno.test("a report kept with a checkpoint_unwritten note is judged again as its evidence gives", async () => {
  // The engine adds it after judging, when the checkpoint cannot be marked
  // completed: the storage trouble that also keeps a report out of the ledger.
  const { report } = await runWithExtra({});
  report.findings.push({
    severity: "note",
    code: "checkpoint_unwritten",
    subject: "checkpoint",
    message: "The checkpoint could not be marked completed: disk full",
    sample_indexes: [],
  });
  assert.equal(keptReportProblem(report), null);
});
