/**
 * A deleted canary's marker in an /inventory answer after the deletion: the
 * adapter's own answer shows it still holds the text, whatever its counts
 * say, so it counts as the marker seen. The control's own record listed in
 * its inventory says nothing about the deletion.
 */

import assert from "node:assert/strict";
import type { RunReport } from "../lib/runner/report.ts";
import {
  findingsOf,
  type InterceptedRequest,
  runFake,
} from "./_fake_target.ts";

type Markers = Record<"test" | "control", string>;

/** Runs with every inventory answer after the deletion listing `listed(markers, request)`. */
async function runListing(
  listed: (markers: Markers, request: InterceptedRequest) => string[],
): Promise<RunReport> {
  const markers: Markers = { test: "", control: "" };
  const { report } = await runFake({
    hook: async (request, forward) => {
      if (request.op === "query") {
        markers[request.role] = String(request.body.query);
      }
      const answer = await forward();
      if (request.op !== "inventory" || request.stage === "setup") {
        return answer;
      }
      const records = listed(markers, request).map((text, i) => ({
        id: `doc-${i}`,
        text: `Deletion probe ${text}.`,
      }));
      return { ...answer, details: { records } };
    },
  });
  return report;
}

Deno.test("a deleted canary's marker in the test inventory's answer is FAIL, placed in the inventory", async () => {
  const report = await runListing((markers, request) =>
    request.role === "test" ? [markers.test] : []
  );
  assert.equal(report.verdict, "FAIL");
  assert.deepEqual(findingsOf(report, "fail"), [
    "marker_retrievable:retrieval",
  ]);
  const last = report.samples.at(-1)!;
  assert.equal(last.marker_seen, true);
  assert.equal(last.marker_form, "exact");
  assert.deepEqual(last.marker_found_in, {
    query: "test",
    answer: "inventory",
    field: "details.records.0.text",
  });
  // The stores still read 0: only the listing gives the records away.
  assert.equal(last.inventory?.source_records, 0);
  const finding = report.findings.find((f) => f.code === "marker_retrievable");
  assert.match(
    finding?.message ?? "",
    /^the marker stayed in the adapter's answers through the final sample at [\d.]+ s \(seen in the field details\.records\.0\.text of the test namespace's \/inventory answer: the adapter still lists the deleted record, whatever its counts say\)/,
  );
  assert.equal(report.cleanup.cleanup_complete, false);
  assert.equal(report.cleanup.marker_seen.test, true);
  assert.ok(
    report.cleanup.problems.includes(
      "the test marker is still listed in an /inventory answer after cleanup",
    ),
    JSON.stringify(report.cleanup.problems),
  );
});

Deno.test("a deleted canary's marker in the control inventory's answer is FAIL, placed in the control namespace", async () => {
  const report = await runListing((markers, request) =>
    request.role === "control" ? [markers.control, markers.test] : []
  );
  assert.equal(report.verdict, "FAIL");
  const last = report.samples.at(-1)!;
  assert.deepEqual(last.marker_found_in, {
    query: "control",
    answer: "inventory",
    field: "details.records.1.text",
  });
  assert.equal(last.control_seen, true);
});

Deno.test("the control's own record in its inventory's answer does not count: PASS", async () => {
  const report = await runListing((markers, request) =>
    request.role === "control" && request.stage === "window"
      ? [markers.control]
      : []
  );
  assert.equal(report.verdict, "PASS");
  assert.ok(report.samples.every((s) => s.marker_seen === false));
  assert.ok(report.samples.every((s) => s.marker_found_in === null));
  // The control is judged by its query alone, as before.
  assert.ok(report.samples.every((s) => s.control_seen === true));
  assert.ok(report.samples.every((s) => s.control_form === "exact"));
});

Deno.test("a marker the /query answer carries is placed there before the inventory's", async () => {
  let marker = "";
  const { report } = await runFake({
    hook: async (request, forward) => {
      if (request.op === "query") marker ||= String(request.body.query);
      const answer = await forward();
      if (request.stage !== "window" || request.role !== "test") return answer;
      return request.op === "query"
        ? { text: `probe ${marker}` }
        : { ...answer, details: { records: [{ text: marker }] } };
    },
  });
  assert.equal(report.verdict, "FAIL");
  assert.deepEqual(report.samples.at(-1)!.marker_found_in, {
    query: "test",
    field: "text",
  });
});
