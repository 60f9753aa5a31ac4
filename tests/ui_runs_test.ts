/** The run pages through createApp in memory: data, twins, words, empty states, downloads, the standalone file. */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  configTargetRef,
  registerNamedTarget,
  regressionsOf,
  retireRunTarget,
  RunJobs,
} from "../lib/runs/mod.ts";
import { parseStagingConfig } from "../lib/contract/config.ts";
import type { RunDetail } from "../routes/ui/run_view.ts";
import { withJobStates } from "../routes/ui/run_list.tsx";
import { renderRunDocument } from "../routes/ui/run_html.tsx";
import { nextSteps, type RunContext } from "../routes/ui/run_words.ts";
import type { RunsPageData } from "../routes/pages/runs.tsx";
import { MEM0_ASSESSMENT } from "../routes/pages/reference.tsx";
import { markdownHtml } from "../routes/ui/markdown.ts";
import { escapeRegExp } from "../lib/regexp.ts";
import { AccountBook } from "../lib/auth/mod.ts";
import { EXAMPLE_ACCOUNTS } from "../fixtures/host/host.ts";
import { ask, type Operator } from "./operator_support.ts";
import { ADMIN_TOKEN, at, page, signIn } from "./browser/_server.ts";
import {
  failThenFixed,
  interruptedCheckpoint,
  referenceRuns,
  type RunsFixture,
  runTarget,
  syntheticRuns,
  withDemoTarget,
  withRunsFixture,
} from "./browser/_runs.ts";
import { withUiApp } from "./browser/_server.ts";
import { recordLaterCleanup } from "./_later_cleanup.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { renderSummaryMarkdown } from "../lib/render/summary_md.ts";
import type { TraceDb } from "../lib/db.ts";
import {
  type GateResult,
  regressionIdFor,
  saveRegression,
} from "../lib/ledger/regressions.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { runExternal } from "../lib/runs/external_run.ts";
import { gateDisplay } from "../routes/ui/gate_words.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import {
  SERVE_UNSET_TOKEN_REFUSAL,
  serveCommand,
  serveWithoutTokenVariable,
  stagingConfig,
  statementsDuring,
  withListeningChild,
  withTempDir,
} from "./_helpers.ts";
import { withDataFlags } from "../routes/ui/printed_command.ts";
import { compareStoredRuns } from "../lib/runs/mod.ts";
import type { ComparePageData } from "../routes/pages/compare.tsx";

const BEARER = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** The run pages in memory over data that `seed` wrote. */
async function withRunsApp<T>(
  seed: (db: TraceDb, dataDir: string) => Promise<unknown>,
  fn: (fixture: RunsFixture, jobs: RunJobs) => Promise<T>,
): Promise<T> {
  return await withRunsFixture(
    { seed },
    (fixture) => fn(fixture, fixture.jobs),
  );
}

async function json<T>(fixture: RunsFixture, path: string): Promise<T> {
  const response = await fixture.app.request(at(path), page(BEARER));
  assert.equal(
    response.status,
    200,
    `${path}: ${await response.clone().text()}`,
  );
  return await response.json() as T;
}

async function html(fixture: RunsFixture, path: string): Promise<string> {
  const response = await fixture.app.request(at(path), page(BEARER));
  assert.equal(response.status, 200, path);
  return await response.text();
}

/** A later cleanup's deletion counts when both delete requests were acknowledged. */
const DELETED_ALL = {
  delete_requests: 2,
  delete_requests_acknowledged: 2,
  deleted_ids: 3,
  ids_to_delete: 3,
} as const;

Deno.test("an empty data directory: every run page explains what would fill it", async () => {
  await withRunsApp(() => Promise.resolve(), async (fixture) => {
    const overview = await html(fixture, "/");
    assert.match(overview, /No runs yet/);
    assert.match(overview, /trace external-register --target my-staging/);
    assert.match(overview, /No saved regressions yet/);
    assert.match(overview, /Not checked since this server started/);
    assert.match(await html(fixture, "/runs"), /No runs yet/);
    assert.match(await html(fixture, "/targets"), /No registered targets/);
    const regressions = await html(fixture, "/regressions");
    assert.match(regressions, /No enforced regressions/);
    assert.match(regressions, /No pending regressions/);
    assert.match(await html(fixture, "/reference"), /No reference runs yet/);
    const compare = await html(fixture, "/compare");
    assert.match(compare, /No replayed regression to compare yet/);
    assert.match(compare, /No completed external run to compare yet/);
    assert.doesNotMatch(compare, /<datalist/, "nothing to offer");
    const refusals: [string, number, string][] = [
      // An unknown run: no server path or command-line flag in the message.
      [
        "/runs/run-20261129T214455Z-3f9a1c.json",
        404,
        "Cannot find run run-20261129T214455Z-3f9a1c among this server's runs; check the id",
      ],
      // A parameter the runs page does not read is refused, not ignored.
      [
        "/runs.json?verdcit=FAIL",
        400,
        'Invalid /runs query: "verdcit" is not one this page reads (target, verdict, kind, state, cursor); remove it',
      ],
      // A filter given twice is refused, never read as its first value.
      [
        "/runs.json?verdict=FAIL&verdict=PASS",
        400,
        "Invalid /runs query: verdict may be given once",
      ],
      // One run alone is refused naming what is missing, never dropped.
      [
        "/compare.json?a=run-20261129T214455Z-3f9a1c",
        400,
        "Cannot compare: give both runs, a=RUN_A and b=RUN_B (the one that started first is before); only a was given",
      ],
    ];
    for (const [path, status, message] of refusals) {
      const response = await fixture.app.request(at(path), page(BEARER));
      assert.equal(response.status, status, path);
      assert.equal((await response.json()).error.message, message);
    }
    const twin = await json<{ recent: unknown[]; gate: unknown }>(
      fixture,
      "/index.json",
    );
    assert.deepEqual(twin.recent, []);
  });
});

Deno.test("the runs list pages newest first with a cursor and keeps its filters in the URL", async () => {
  await withRunsApp(async (db) => {
    const [template] = await referenceRuns(db, ["correct"]);
    await syntheticRuns(db, { ...template!, kind: "external" }, 120, {
      targets: ["alpha", "beta"],
    });
  }, async (fixture) => {
    const first = await json<RunsPageData>(fixture, "/runs.json");
    assert.equal(first.total, 121);
    assert.equal(first.runs.length, 50);
    assert.ok(first.next_cursor);
    const starts = first.runs.map((r) => r.started_at);
    assert.deepEqual(starts, [...starts].sort().reverse(), "newest first");
    const second = await json<RunsPageData>(
      fixture,
      `/runs.json?cursor=${first.next_cursor}`,
    );
    assert.equal(second.runs.length, 50);
    assert.ok(second.runs[0]!.started_at < first.runs.at(-1)!.started_at);
    const seen = new Set([...first.runs, ...second.runs].map((r) => r.run_id));
    assert.equal(seen.size, 100, "no run on two pages");
    // On a phone each run is a block of labelled cells.
    const list = await html(fixture, "/runs");
    assert.match(tagOf(list, "runs-table"), /class="table--stack"/);
    assert.match(list, /<td data-label="Target">/);

    const filtered = await json<RunsPageData>(
      fixture,
      "/runs.json?target=alpha&verdict=fail&kind=external",
    );
    assert.equal(filtered.matching, 20);
    assert.ok(
      filtered.runs.every((r) =>
        r.target_id === "alpha" && r.verdict === "FAIL"
      ),
    );
    assert.equal(filtered.next_cursor, null);
    const body = await html(fixture, "/runs?target=alpha&verdict=FAIL");
    assert.match(body, /<option value="alpha" selected>alpha<\/option>/);
    assert.match(body, /20 of 121 runs match these filters/);
    const older = await html(fixture, "/runs?target=beta");
    assert.match(older, /href="\/runs\?target=beta&amp;cursor=[\w-]+"/);

    for (
      const bad of [
        "/runs.json?verdict=MAYBE",
        "/runs.json?cursor=not-a-cursor",
      ]
    ) {
      const response = await fixture.app.request(at(bad), page(BEARER));
      assert.equal(response.status, 400, bad);
    }
  });
});

Deno.test("a FAIL against the demo app: the detail leads with why, links findings to samples and says what to do", async () => {
  let ids: { fail: string; pass: string; regression: string } | null = null;
  await withRunsApp(async (db, dataDir) => {
    const { fail, pass, regressionId } = await failThenFixed(db, dataDir);
    ids = { fail: fail.run_id, pass: pass.run_id, regression: regressionId };
  }, async (fixture) => {
    const { fail, pass, regression } = ids!;
    const detail = await json<RunDetail>(fixture, `/runs/${fail}.json`);
    assert.equal(detail.verdict, "FAIL");
    assert.equal(detail.state, "completed");
    assert.match(
      detail.headline,
      /^Deleted data was still there at the final sample, \d+\.\d\d s after the deletion was acknowledged: the deleted marker was still retrievable and the answer cache still held 1 record\.$/,
    );
    assert.equal(detail.saved_as, regression);
    const commands = detail.next_steps.map((s) => s.command);
    assert.ok(commands.includes(`trace external-replay ${regression}`));
    assert.ok(commands.includes(`trace external-cleanup ${fail}`));
    // Its replay passed: the page says the regression is enforced now,
    // rather than that a passing replay would make it so.
    const saved = detail.next_steps.find((s) =>
      s.text.startsWith(`Saved as regression ${regression}`)
    );
    assert.match(saved?.text ?? "", /enforced: its replay .* passed/);
    assert.doesNotMatch(saved?.text ?? "", /passing replay makes it enforced/);
    // The replay and the regressions it names are links on the page.
    assert.deepEqual(saved?.links, [
      { href: `/runs/${pass}`, label: `its replay ${pass}` },
      { href: "/regressions", label: "the regressions" },
    ]);
    assert.equal(detail.requests.status, "recorded");
    assert.deepEqual(
      detail.requests.phases.map((p) => p.name),
      ["ingest", "baseline", "delete", "window", "cleanup"],
    );
    assert.equal(detail.requests.total, detail.report!.requests.total);

    const body = await html(fixture, `/runs/${fail}`);
    assert.match(
      body,
      new RegExp(
        `See <a href="/runs/${pass}">its replay ${pass}</a> · <a href="/regressions">the regressions</a>`,
      ),
    );
    const verdict = body.indexOf('badge--lg">FAIL</span>');
    const findings = body.indexOf('id="findings"');
    const timeline = body.indexOf('id="timeline"');
    assert.ok(verdict > 0 && verdict < findings && findings < timeline);
    const samples = detail.report!.findings[0]!.sample_indexes;
    assert.match(body, new RegExp(`data-samples="${samples.join(" ")}"`));
    assert.match(body, new RegExp(`href="#sample-${samples[0]}"`));
    for (const index of samples) {
      assert.match(
        body,
        new RegExp(`<tr id="sample-${index}" data-sample="${index}"`),
      );
      assert.match(
        body,
        new RegExp(`class="sample-col" data-sample="${index}"`),
      );
    }
    assert.match(body, /window ends 1 s/);
    assert.match(
      body,
      /2 documents deleted, then every store sampled every 0\.25 s/,
    );
    // On a phone the tables stack, each cell naming its column, and the
    // timeline scales by its viewBox (tests/browser/ui_runs_test.ts looks).
    for (const id of ["samples-table", "cleanup-table"]) {
      assert.match(tagOf(body, id), /class="table--stack"/, id);
    }
    assert.match(body, /<td class="num" data-label="source">0<\/td>/);
    assert.match(body, /<td class="num is-left" data-label="cache left">1</);
    assert.match(body, /<table class="waterfall-table table--stack">/);
    // The requests are phase boxes under a line of text, not framed again by
    // the inspection's bordered `.waterfall` box, whose border would sit
    // flush on that text and around the phases' own borders.
    const requests =
      /<section class="section" id="requests"[\s\S]*?<\/section>/.exec(body)
        ?.[0] ?? "";
    assert.match(requests, /<details class="phase"/);
    assert.doesNotMatch(requests, /class="(?:[^"]* )?waterfall[ "]/);
    assert.match(
      await Deno.readTextFile(new URL("../ui/style.css", import.meta.url)),
      /^\.waterfall \{\n {2}border: 1px solid/m,
    );
    assert.match(body, /<svg width="880" height="\d+" viewBox="0 0 880 \d+"/);
    assert.match(body, /<code>trace external-cleanup run-/);
    assert.match(body, /STILL RETRIEVABLE/);
    assert.match(
      body,
      /href="\/traces\/find\?thread_id=trace-test-[0-9a-f]+&amp;selected=run-/,
    );

    const replay = await json<RunDetail>(fixture, `/runs/${pass}.json`);
    assert.equal(replay.verdict, "PASS");
    assert.equal(replay.regression_id, regression);
    assert.equal(replay.compare_with, fail);
    assert.deepEqual(replay.next_steps, []);
    assert.match(replay.headline, /^The deletion held: every store read 0/);
  });
});

Deno.test("a run whose baseline failed deleted nothing, and its deletion window says so rather than that documents were deleted", async () => {
  let runId = "";
  await withRunsApp(async (db, dataDir) => {
    runId = (await withDemoTarget(
      db,
      "partial",
      "partial-inventory",
      () => runTarget(db, dataDir, "partial"),
    )).run_id;
  }, async (fixture) => {
    const detail = await json<RunDetail>(fixture, `/runs/${runId}.json`);
    assert.equal(detail.verdict, "INCONCLUSIVE");
    assert.equal(detail.report!.deletion, null);
    const body = await html(fixture, `/runs/${runId}`);
    const window = /<section class="section" id="window"[\s\S]*?<\/section>/
      .exec(body)?.[0] ?? "";
    assert.match(window, /No samples/);
    assert.doesNotMatch(window, /documents? deleted/);
    assert.match(
      window,
      /Nothing was deleted, so no store was sampled: the contract deletes 2 documents, then samples every store every 0\.25 s through a 1 s window\./,
    );
  });
});

Deno.test("a reference run's page, which no one can run again, leaves no empty row of actions under its verdict", async () => {
  let runId = "";
  await withRunsApp(async (db) => {
    runId = (await referenceRuns(db, ["stale-cache"]))[0]!.run_id;
  }, async (fixture) => {
    const body = await html(fixture, `/runs/${runId}`);
    assert.match(body, /Reference run/);
    assert.doesNotMatch(body, /<div class="actions"><\/div>/);
  });
});

Deno.test("run downloads: the report, JUnit, Markdown and one self-contained HTML file", async () => {
  let runId = "";
  await withRunsApp(async (db) => {
    runId = (await referenceRuns(db, ["stale-cache"]))[0]!.run_id;
  }, async (fixture) => {
    const get = (name: string) =>
      fixture.app.request(at(`/runs/${runId}/${name}`), page(BEARER));
    const report = await get("report.json");
    assert.match(
      report.headers.get("content-disposition") ?? "",
      new RegExp(`attachment; filename="${runId}.json"`),
    );
    assert.equal((await report.json()).run_id, runId);
    assert.match(await (await get("junit.xml")).text(), /<testsuite/);
    assert.match(
      await (await get("summary.md")).text(),
      /### Trace deletion contract: FAIL/,
    );
    const file = await (await get("report.html")).text();
    assert.ok(file.startsWith("<!DOCTYPE html>"));
    assert.doesNotMatch(file, /<script/i);
    assert.doesNotMatch(
      file,
      /\s(src|href)="(https?:)?\/\//,
      "nothing fetched",
    );
    assert.doesNotMatch(file, /<link /, "no external stylesheet");
    assert.match(file, /<style>/);
    assert.match(file, /id="timeline"/);
    assert.match(file, /badge--lg">FAIL</);
    const unauthenticated = await fixture.app.request(
      at(`/runs/${runId}/report.json`),
      page(),
    );
    assert.equal(unauthenticated.status, 401, "downloads need sign-in");
  });
});

/** A FAIL of the demo's stale cache through its registered target, whose own cleanup left the cache serving the text. */
function staleCacheFail(db: TraceDb, dataDir: string): Promise<RunReport> {
  return withDemoTarget(
    db,
    "demo-staging",
    "stale-cache",
    () => runTarget(db, dataDir, "demo-staging"),
  );
}

Deno.test("the Markdown summary of a run a later cleanup completed says so and sends no one to clean it up, as the page does", async () => {
  let fail: RunReport | undefined;
  const seed = async (db: TraceDb, dataDir: string) => {
    fail = await staleCacheFail(db, dataDir);
    assert.equal(fail.cleanup.cleanup_complete, false);
    await recordLaterCleanup(db, fail, "cleanup-later-1", {
      complete: true,
      at: "2026-11-29T11:00:00.000Z",
    });
  };
  const check = async (app: RunsFixture["app"]) => {
    const runId = fail!.run_id;
    const get = async (path: string) => {
      const response = await app.request(at(path), page(BEARER));
      assert.equal(response.status, 200, path);
      return await response.text();
    };
    const body = await get(`/runs/${runId}`);
    assert.match(body, /A later cleanup \(cleanup-later-1\)/);
    assert.doesNotMatch(body, new RegExp(`trace external-cleanup ${runId}`));
    const summary = await get(`/runs/${runId}/summary.md`);
    assert.doesNotMatch(summary, /external-cleanup/);
    assert.match(
      summary,
      /\*\*Complete later\*\*: cleanup `cleanup-later-1` \(2026-11-29T11:00:01.000Z\) deleted every id this run issued; every store of both namespaces read 0 and neither marker was retrievable\./,
    );
    assert.match(
      body,
      /badge[^"]*">COMPLETE<\/span> A later cleanup \(cleanup-later-1\) <time[^>]*>[^<]*<\/time> deleted every id this run issued: every store of both namespaces read 0 and neither marker was retrievable/,
    );
    const detail = JSON.parse(await get(`/runs/${runId}.json`));
    assert.equal(detail.later_cleanup.markers_queried, true);
  };
  // With the data directory, as trace serve reads runs, and from the ledger alone.
  await withRunsFixture({ seed }, (fixture) => check(fixture.app));
  await withUiApp(
    { adminToken: ADMIN_TOKEN, seed },
    (fixture) => check(fixture.app),
  );
  // A later cleanup recorded before runs kept their markers read the inventories only.
  const cleared = renderSummaryMarkdown(fail!, {
    replayCommand: null,
    laterCleanup: {
      cleanup_id: "cleanup-later-0",
      finished_at: "2026-11-29T10:00:00.000Z",
      status: "inventories_clear",
      cleanup_complete: true,
      markers_queried: false,
      marker_seen: { test: null, control: null },
      ...DELETED_ALL,
      problems: [],
    },
  });
  assert.match(
    cleared,
    /\*\*Inventories clear later\*\*: cleanup `cleanup-later-0` \(2026-11-29T10:00:00.000Z\) deleted every id this run issued and every store of both namespaces read 0\. It could not query the markers \(this run's were not kept\), so whether the records can still be retrieved was not checked\./,
  );
  assert.doesNotMatch(cleared, /external-cleanup/);
  // A later cleanup that still left records: said, and the command stays.
  const incompleteLater = (
    cleanupId: string,
    finishedAt: string,
    testMarkerSeen: boolean,
    problem: string,
  ) =>
    renderSummaryMarkdown(fail!, {
      replayCommand: null,
      laterCleanup: {
        cleanup_id: cleanupId,
        finished_at: finishedAt,
        status: "incomplete",
        cleanup_complete: false,
        markers_queried: true,
        marker_seen: { test: testMarkerSeen, control: false },
        ...DELETED_ALL,
        problems: [problem],
      },
    });
  const retried = incompleteLater(
    "cleanup-later-2",
    "2026-11-29T12:00:00.000Z",
    false,
    "cache_records 1 left in the test namespace after polling",
  );
  assert.match(
    retried,
    /A later cleanup \(`cleanup-later-2`, 2026-11-29T12:00:00.000Z\) was still incomplete: cache\\_records 1 left/,
  );
  assert.match(retried, new RegExp(`trace external-cleanup ${fail!.run_id}`));
  // A later cleanup that found the text still served: fix the application first.
  const served = incompleteLater(
    "cleanup-later-4",
    "2026-11-29T13:00:00.000Z",
    true,
    "the test marker is still retrievable",
  );
  assert.match(
    served,
    new RegExp(
      `The application still serves this run's text after deleting it, so another cleanup cannot help yet: fix its delete path \\(or remove the records with the application's own tools\\), then run \`trace external-cleanup ${
        fail!.run_id
      }\` again to confirm\\.`,
    ),
  );
  assert.doesNotMatch(served, /Remove what is left/);
});

Deno.test("after a later cleanup found the application still serving a run's text, the run page and its summary say to fix the application first", async () => {
  let fail: RunReport | undefined;
  const seed = async (db: TraceDb, dataDir: string) => {
    fail = await staleCacheFail(db, dataDir);
    // The stale cache still serves the marker after the run's own cleanup.
    assert.equal(fail.cleanup.marker_seen.test, true);
    await recordLaterCleanup(db, fail, "cleanup-later-5", { complete: false });
  };
  await withRunsFixture({ seed }, async (fixture) => {
    const runId = fail!.run_id;
    const get = async (path: string) => {
      const response = await fixture.app.request(at(path), page(BEARER));
      assert.equal(response.status, 200, path);
      return await response.text();
    };
    const advice =
      `Cleanup cleanup-later-5 found the application still serving this run's text after deleting it: fix the application's delete path (or remove the records with the application's own tools), then run trace external-cleanup ${runId} again to confirm.`;
    const detail = JSON.parse(await get(`/runs/${runId}.json`));
    const step = detail.next_steps.find((s: { command: string | null }) =>
      s.command?.startsWith("trace external-cleanup")
    );
    assert.equal(step?.text, advice);
    const body = await get(`/runs/${runId}`);
    assert.ok(body.includes(advice.replaceAll("'", "&#39;")), "cleanup panel");
    assert.doesNotMatch(body, /remove them before the next run/);
    assert.match(
      await get(`/runs/${runId}/summary.md`),
      /still serves this run's text after deleting it, so another cleanup cannot help yet/,
    );
  });
});

Deno.test("the compare page says what a later cleanup of a run found, beside its own cleanup, as the run page does", async () => {
  let ids: { fail: string; pass: string } | null = null;
  await withRunsApp(async (db, dataDir) => {
    const { fail, pass } = await failThenFixed(db, dataDir);
    ids = { fail: fail.run_id, pass: pass.run_id };
    assert.equal(fail.cleanup.cleanup_complete, false);
    // As recorded before runs kept their markers: the inventories only.
    await recordLaterCleanup(db, fail, "cleanup-later-3", {
      complete: true,
      markersQueried: false,
      at: "2026-11-29T11:00:00.000Z",
    });
  }, async (fixture) => {
    const { fail, pass } = ids!;
    const body = await html(fixture, `/compare?a=${fail}&b=${pass}`);
    const cleanup = body.slice(body.indexOf('id="cleanup"'));
    const [sideA, sideB] = cleanup.split("B (after)");
    // A's own cleanup stays incomplete; the later one is said beside it.
    assert.match(sideA!, /A \(before\) <span class="badge[^"]*">INCOMPLETE/);
    assert.match(
      sideA!,
      /INVENTORIES CLEAR<\/span> A later cleanup \(cleanup-later-3\) <time[^>]*>[^<]*<\/time> deleted every id this run issued and every store of both namespaces read 0\. It could not query the markers \(this run&#39;s were not kept\), so whether the records can still be retrieved was not checked\./,
    );
    assert.doesNotMatch(sideB!, /A later cleanup/);
    // The same words as the run page.
    const run = await html(fixture, `/runs/${fail}`);
    assert.match(
      run,
      /A later cleanup \(cleanup-later-3\) <time[^>]*>[^<]*<\/time> deleted every id this run issued/,
    );
  });
});

Deno.test("an interrupted run reads INCONCLUSIVE with what it issued, never PASS", async () => {
  let runId = "";
  await withRunsApp(async (db, dataDir) => {
    await registerNamedTarget(
      db,
      "demo-staging",
      parseStagingConfig({
        base_url: "http://127.0.0.1:1",
        environment: "staging",
        allow_synthetic_writes: true,
      }),
    );
    runId = (await interruptedCheckpoint(dataDir, "demo-staging")).run_id;
  }, async (fixture) => {
    const detail = await json<RunDetail>(fixture, `/runs/${runId}.json`);
    assert.equal(detail.state, "interrupted");
    assert.equal(detail.target_registered, true);
    assert.equal(detail.verdict, "INCONCLUSIVE");
    assert.match(
      detail.headline,
      /interrupted .* 3 synthetic ids it issued may remain/,
    );
    assert.deepEqual(detail.next_steps.map((s) => s.command), [
      `trace external-cleanup ${runId}`,
    ]);
    const download = await fixture.app.request(
      at(`/runs/${runId}/report.json`),
      page({ ...BEARER, accept: "application/json" }),
    );
    assert.equal(download.status, 409);
    const refusal = (await download.json()).error;
    assert.equal(refusal.code, "conflict");
    assert.match(refusal.message, /has no finished report yet/);
    const body = await html(fixture, `/runs/${runId}`);
    assert.match(body, /badge--lg">INCONCLUSIVE</);
    assert.doesNotMatch(body, /badge--lg">PASS</);
    assert.match(body, /Issued and not cleaned up/);
    assert.match(body, /trace-doc-a trace-doc-b/);
    const list = await json<RunsPageData>(
      fixture,
      "/runs.json?state=interrupted",
    );
    assert.deepEqual(list.runs.map((r) => [r.run_id, r.verdict]), [[
      runId,
      "INCONCLUSIVE",
    ]]);
  });
});

Deno.test("a run of a target never registered offers no cleanup command that would be refused", async () => {
  let runId = "";
  await withRunsApp(async (_db, dataDir) => {
    runId = (await interruptedCheckpoint(dataDir, "cfg-quickstart")).run_id;
  }, async (fixture) => {
    const detail = await json<RunDetail>(fixture, `/runs/${runId}.json`);
    assert.equal(detail.target_registered, false);
    assert.deepEqual(detail.next_steps.map((s) => s.command), [null]);
    assert.match(
      detail.next_steps[0]!.text,
      /^Synthetic records may remain in the staging application, but trace external-cleanup cannot remove them, as target cfg-quickstart was never registered/,
    );
    const body = await html(fixture, `/runs/${runId}`);
    assert.doesNotMatch(body, new RegExp(`trace external-cleanup ${runId}`));
    assert.match(body, /was never registered and its adapter is unknown/);
  });
});

Deno.test("a target page shows the token's variable name and never a token", async () => {
  const secret = "do-not-show-this-token-value-123";
  Deno.env.set("UI_TEST_STAGING_TOKEN", secret);
  try {
    await withRunsApp(async (db) => {
      await registerNamedTarget(
        db,
        "secure-staging",
        parseStagingConfig({
          base_url: "https://staging.example",
          environment: "staging",
          allow_synthetic_writes: true,
          token_env: "UI_TEST_STAGING_TOKEN",
        }),
      );
    }, async (fixture) => {
      for (
        const path of [
          "/targets/secure-staging",
          "/targets/secure-staging.json",
          "/targets",
        ]
      ) {
        const body = await (await fixture.app.request(at(path), page(BEARER)))
          .text();
        assert.ok(!body.includes(secret), `${path} shows the token`);
      }
      const body = await html(fixture, "/targets/secure-staging");
      assert.match(body, /<code>UI_TEST_STAGING_TOKEN<\/code>/);
      assert.match(body, /Run the deletion contract/);
      assert.match(body, /No run yet: run the deletion contract/);
    });
  } finally {
    Deno.env.delete("UI_TEST_STAGING_TOKEN");
  }
});

Deno.test("a target's page reads the registered targets once", async () => {
  await withRunsApp(
    (db) => registerNamedTarget(db, "staging", stagingConfig()),
    async (fixture) => {
      const reads = await statementsDuring(
        fixture.db,
        /FROM ledger_targets t LEFT JOIN/,
        async () => {
          assert.match(await html(fixture, "/targets/staging"), /staging/);
        },
      );
      assert.equal(reads.length, 1);
    },
  );
});

Deno.test("run actions need the CSRF token and a same-origin request", async () => {
  await withRunsApp(async (db) => {
    await registerNamedTarget(
      db,
      "unreachable",
      parseStagingConfig({
        base_url: "http://127.0.0.1:1",
        environment: "staging",
        allow_synthetic_writes: true,
      }),
    );
  }, async (fixture, jobs) => {
    const cookie = await signIn(fixture);
    const post = (headers: Record<string, string>, body: string) =>
      fixture.app.request(
        at("/targets/unreachable/run"),
        page({
          cookie,
          "content-type": "application/x-www-form-urlencoded",
          ...headers,
        }, { method: "POST", body }),
      );
    assert.equal((await post({}, "_csrf=wrong")).status, 403);
    const crossSite = await post(
      { origin: "http://evil.example", "sec-fetch-site": "cross-site" },
      "_csrf=wrong",
    );
    assert.equal(crossSite.status, 403);
    assert.equal(jobs.active, null, "nothing was started");
  });
});

Deno.test("the standalone document renders a running and an interrupted run without a report", async () => {
  await withRunsApp(async (_db, dataDir) => {
    await interruptedCheckpoint(dataDir, "demo-staging");
  }, async (fixture) => {
    const detail = await json<RunDetail>(
      fixture,
      "/runs/run-20261129T100000Z-00000000dead.json",
    );
    const file = await renderRunDocument(detail, {
      generatedAt: "2026-11-30T12:00:00Z",
      version: "9.9.9",
    });
    assert.doesNotMatch(file, /<script/i);
    assert.match(file, /Written by Trace 9\.9\.9 at 2026-11-30 12:00:00 UTC/);
    assert.match(file, /Issued and not cleaned up/);
    assert.doesNotMatch(file, /data-live-url/, "a file polls nothing");
  });
});

Deno.test("a script starts a run with its bearer token; a second start is refused naming the first", async () => {
  await withRunsApp(() => Promise.resolve(), async (fixture, jobs) => {
    await withDemoTarget(fixture.db, "demo", "stale-cache", async () => {
      const start = (accept: string) =>
        fixture.app.request(
          at("/targets/demo/run"),
          page({ ...BEARER, accept }, { method: "POST" }),
        );
      const first = await start("application/json");
      assert.equal(first.status, 202);
      const { run_id: runId } = await first.json();
      assert.equal(jobs.active, runId);
      const second = await start("application/json");
      assert.equal(second.status, 409);
      const refusal = await second.json();
      assert.equal(refusal.error.running_run_id, runId);
      assert.match(
        refusal.error.message,
        new RegExp(`run ${runId} is still running`),
      );
      const running = await json<RunDetail>(fixture, `/runs/${runId}.json`);
      assert.equal(running.state, "running");
      assert.equal(running.verdict, "RUNNING");
      assert.ok(running.progress_text, "progress in words while it runs");
      const busyPage = await start("text/html");
      assert.equal(busyPage.status, 409);
      assert.match(await busyPage.text(), new RegExp(`Watch run ${runId}`));
      const done = await jobs.wait(runId);
      assert.equal(done.verdict, "FAIL");
      const finished = await json<RunDetail>(fixture, `/runs/${runId}.json`);
      assert.equal(finished.state, "completed");
      assert.equal(finished.verdict, "FAIL");
    }, { windowSeconds: 2 });
  });
});

Deno.test("starting a run on an unreachable adapter says so and records nothing", async () => {
  await withRunsApp(async (db) => {
    await registerNamedTarget(
      db,
      "unreachable",
      parseStagingConfig({
        base_url: "http://127.0.0.1:1",
        environment: "staging",
        allow_synthetic_writes: true,
      }),
    );
  }, async (fixture, jobs) => {
    const answer = await fixture.app.request(
      at("/targets/unreachable/run"),
      page({ ...BEARER, accept: "application/json" }, { method: "POST" }),
    );
    assert.equal(answer.status, 502);
    assert.match(
      (await answer.json()).error.message,
      /^Cannot reach the staging adapter at http:\/\/127\.0\.0\.1:1/,
    );
    assert.equal(jobs.active, null);
    assert.equal((await json<RunsPageData>(fixture, "/runs.json")).total, 0);
    // The page leads back to the target whose button was pressed, where it
    // can be pressed again once the adapter answers, not to the list.
    const shown = await fixture.app.request(
      at("/targets/unreachable/run"),
      page({ ...BEARER, accept: "text/html" }, { method: "POST" }),
    );
    assert.equal(shown.status, 502);
    const body = await shown.text();
    assert.match(body, /<h1>The staging adapter did not answer<\/h1>/);
    assert.match(
      body,
      /<a href="\/targets\/unreachable">Back to the target<\/a>/,
    );
    assert.doesNotMatch(body, /href="\/targets">Back to the targets/);
    // The notice says once that nothing was run, and what to do.
    assert.equal(body.match(/nothing was run or recorded/gi)?.length, 1);
    assert.doesNotMatch(body, /nothing was recorded/i);
  });
});

Deno.test("reference runs: the headline names a transient residual or what left the run undecided, and the expectation", async () => {
  let ids: string[] = [];
  await withRunsApp(async (db) => {
    ids = (await referenceRuns(db, [
      "tombstone-window-compaction",
      "control-collateral",
    ])).map((r) => r.run_id);
  }, async (fixture) => {
    const transient = await json<RunDetail>(fixture, `/runs/${ids[0]}.json`);
    assert.equal(transient.verdict, "PASS");
    assert.match(
      transient.headline,
      /^The deletion held: .* after records in the source store until \d+\.\d\d s and records in the vector index until \d+\.\d\d s inside the window\.$/,
    );
    assert.deepEqual(
      transient.next_steps,
      [],
      "a reference system has nothing to fix",
    );
    assert.equal(transient.reference?.matches, true);
    assert.equal(transient.reference?.system, "tombstone-window-compaction");
    const body = await html(fixture, `/runs/${ids[0]}`);
    assert.match(body, /As expected of this system \(PASS \(transient\)\)/);
    assert.match(body, /class="transient"/, "the transient residual is shaded");

    const lost = await json<RunDetail>(fixture, `/runs/${ids[1]}.json`);
    assert.equal(lost.verdict, "INCONCLUSIVE");
    assert.match(lost.headline, /^Nothing was decided: /);
  });
});

Deno.test("the reference matrix explains every cell it shows, cut and ? among them, in a legend", async () => {
  await withRunsApp(async (db) => {
    await referenceRuns(db, [
      "interrupted-window",
      "demo-partial-inventory",
      "control-collateral",
      "stale-cache",
      "tombstone-window-compaction",
      "correct",
    ]);
  }, async (fixture) => {
    const body = await html(fixture, "/reference");
    const matrix = body.slice(
      body.indexOf('id="reference-matrix"'),
      body.indexOf("</table>", body.indexOf('id="reference-matrix"')),
    );
    const shown = new Set(
      [...matrix.matchAll(/<td class="num cell[^"]*">([^<]+)<\/td>/g)].map((
        m,
      ) => /^\d+\.\d\d s$/.test(m[1]!) ? "time" : m[1]!),
    );
    for (const word of ["cut", "?", "LEFT", "LOST", "NOT DONE", "time"]) {
      assert.ok(shown.has(word), `the matrix shows ${word}`);
    }
    assert.match(matrix, /aria-describedby="reference-matrix-legend"/);
    const start = body.indexOf('id="reference-matrix-legend"');
    assert.ok(start > 0, "a legend");
    const legend = body.slice(start, body.indexOf("</dl>", start));
    const explained = new Set(
      [...legend.matchAll(/<dt class="[^"]*">([^<]+)<\/dt><dd>([^<]+)/g)].map((
        m,
      ) => /^\d+\.\d\d s$/.test(m[1]!) ? "time" : m[1]!),
    );
    for (const word of shown) {
      assert.ok(explained.has(word), `the legend explains ${word}`);
    }
    assert.match(
      legend,
      /<dt class="[^"]*">cut<\/dt><dd>cut short: the run was interrupted before its final sample/,
    );
  });
});

Deno.test("the recorded Mem0 assessment agrees with its document", async () => {
  const doc = await Deno.readTextFile(
    new URL("../fixtures/adapters/mem0/ASSESSMENT.md", import.meta.url),
  );
  assert.ok(doc.startsWith(`# ${MEM0_ASSESSMENT.system}:`));
  assert.ok(doc.includes(MEM0_ASSESSMENT.assessed_on), "the date");
  for (const c of MEM0_ASSESSMENT.configurations) {
    assert.ok(doc.includes(c.run_id), c.run_id);
    assert.ok(doc.includes(`--target ${c.target_id}`), c.target_id);
    const section = doc.slice(
      doc.indexOf(c.run_id) - 400,
      doc.indexOf(c.run_id),
    );
    assert.match(
      section,
      new RegExp(`${c.verdict}`),
      `${c.name}: ${c.verdict}`,
    );
    assert.ok(doc.includes(`${c.requests} requests`), `${c.name} requests`);
    for (const f of c.findings) assert.ok(doc.includes(f.message), f.message);
  }
});

Deno.test("the empty reference page names the ledger it read, only to a reader the footer shows it to", async () => {
  const accounts = new AccountBook(EXAMPLE_ACCOUNTS);
  await withRunsFixture({ app: { accounts } }, async (fixture) => {
    const read = async (as: Operator) =>
      await (await ask(fixture.app, "GET", "/reference", { as })).text();
    const empty = (html: string) =>
      /<div class="empty"[\s\S]*?<\/div>/.exec(html)?.[0] ?? "";
    const operator = empty(await read("ops-1"));
    assert.match(operator, /No reference runs yet/);
    assert.ok(
      operator.includes(
        `Looked in the ledger in <span class="copy-id"><code>${
          join(fixture.dataDir, "trace.db")
        }</code>`,
      ),
      operator,
    );
    assert.match(operator, /check the --data-dir \/ --db this server/);
    // The command to run reaches this server's ledger, as the CLI's own advice does.
    assert.ok(
      operator.includes(`trace reference run --data-dir ${fixture.dataDir}<`),
      operator,
    );
    // Where the data lives is server configuration: a viewer sees no path,
    // on the page as in the footer.
    const viewer = await read("viewer-1");
    assert.match(empty(viewer), /No reference runs yet/);
    assert.ok(!viewer.includes(fixture.dataDir), "no data location");
    assert.doesNotMatch(viewer, /Looked in the ledger/);
    assert.match(empty(viewer), /trace reference run</);
  });
});

Deno.test("every command an empty page prints reaches this server's data, and a demo sends its events to this server", async () => {
  const accounts = new AccountBook(EXAMPLE_ACCOUNTS);
  await withRunsFixture({ app: { accounts } }, async (fixture) => {
    const flags = ` --data-dir ${fixture.dataDir}`;
    const printed: string[] = [];
    for (
      const path of ["/", "/runs", "/compare", "/traces/find", "/traces/health"]
    ) {
      const html = await (await ask(fixture.app, "GET", path, { as: "ops-1" }))
        .text();
      const commands = [...html.matchAll(/<pre><code>([\s\S]*?)<\/code>/g)]
        .flatMap((m) => m[1]!.split("\n"));
      assert.ok(commands.length > 0, `${path} prints a command`);
      for (const line of commands) {
        printed.push(line);
        if (line.startsWith("trace demo ")) {
          assert.match(line, /--trace-to http:\/\/[^ ]+$/, line);
        } else if (line.startsWith("trace ")) {
          assert.ok(line.endsWith(flags), `${path}: ${line}`);
        }
      }
    }
    // The pages print what their empty states offer, each line with the flags.
    for (
      const command of ["external-register", "external-run", "reference run"]
    ) {
      assert.ok(
        printed.some((line) => line.startsWith(`trace ${command}`)),
        command,
      );
    }
  });
});

Deno.test("trace serve's pages tell trace demo to send its events to the address the reader reached", async () => {
  await withTempDir(async (dir) => {
    const token = "health-page-admin-token-0123456789";
    const command = serveCommand(`${dir}/data`, {
      unset: ["TRACE_INGEST_TOKEN", "TRACE_UI_AUTH_ACCOUNTS"],
      env: { TRACE_UI_AUTH_TOKEN: token },
    });
    await withListeningChild(command, async (url) => {
      const response = await fetch(`${url}/traces/health`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const html = await response.text();
      const demo = /trace demo --trace-to ([^<\s]+)</.exec(html)?.[1];
      assert.equal(demo, url);
    });
  });
});

Deno.test("trace serve refuses to run a target whose token_env it was started without, saying to restart it with the variable set", async () => {
  await withTempDir(async (dir) => {
    const dataDir = `${dir}/data`;
    const token = "token-env-admin-token-0123456789";
    const command = await serveWithoutTokenVariable(dataDir, token);
    await withListeningChild(command, async (url) => {
      const headers = (accept: string) => ({
        authorization: `Bearer ${token}`,
        accept,
      });
      const run = (accept: string) =>
        fetch(`${url}/targets/staging-token/run`, {
          method: "POST",
          headers: headers(accept),
        });
      const answer = await run("application/json");
      assert.equal(answer.status, 400);
      // The app answers every refused config as a refused request.
      assert.deepEqual((await answer.json()).error, {
        code: "invalid_request",
        message: SERVE_UNSET_TOKEN_REFUSAL,
      });
      const page = await run("text/html");
      assert.equal(page.status, 400);
      const html = await page.text();
      assert.match(
        html,
        /restart it with the variable set \(TRACE_TEST_UNSET_TOKEN=… trace serve …\)/,
      );
      // A page of its own: what happened, nothing sent, and the command.
      assert.match(
        html,
        /<h1>This server cannot read the target&#39;s token<\/h1>/,
      );
      assert.match(html, /Nothing was sent to the staging adapter/);
      assert.match(
        html,
        /data-copy="read -rs TRACE_TEST_UNSET_TOKEN &amp;&amp; export TRACE_TEST_UNSET_TOKEN\ntrace serve --data-dir [^"]+"/,
      );
      assert.match(html, /href="\/targets\/staging-token">Back to the target/);
      const runs = await fetch(`${url}/runs.json`, {
        headers: headers("application/json"),
      });
      assert.equal((await runs.json() as RunsPageData).total, 0);
    });
  });
});

Deno.test("withDataFlags() adds the flags to each trace line but trace demo's, and nothing without flags", () => {
  assert.equal(
    withDataFlags(
      "trace obs init\ntrace demo --trace-to http://x\nls",
      " --db f",
    ),
    "trace obs init --db f\ntrace demo --trace-to http://x\nls",
  );
  assert.equal(withDataFlags("trace obs init", ""), "trace obs init");
});

Deno.test("who sees the run controls: operators run, viewers read, tenant-bound accounts see no runs, read-only disables", async () => {
  const accounts = new AccountBook(EXAMPLE_ACCOUNTS);
  for (const readOnly of [false, true]) {
    await withRunsFixture({
      app: { accounts, readOnly, oneTimeLogin: undefined },
      seed: (db) =>
        registerNamedTarget(
          db,
          "staging",
          parseStagingConfig({
            base_url: "http://127.0.0.1:1",
            environment: "staging",
            allow_synthetic_writes: true,
          }),
        ),
    }, async (fixture) => {
      const page = async (as: Operator, path: string) =>
        await (await ask(fixture.app, "GET", path, { as })).text();
      const target = "/targets/staging";
      const operator = await page("ops-1", target);
      assert.match(operator, /Run the deletion contract/);
      assert.equal(
        /<button[^>]*disabled[^>]*>Run the deletion contract/.test(operator),
        readOnly,
        `disabled exactly in read-only mode (readOnly ${readOnly})`,
      );
      if (readOnly) assert.match(operator, /This server is read-only/);
      const viewer = await page("viewer-1", target);
      assert.doesNotMatch(
        viewer,
        /<button[^>]*>Run the deletion contract/,
        "a viewer sees no run button",
      );
      const viewerRun = await ask(fixture.app, "POST", `${target}/run`, {
        as: "viewer-1",
      });
      assert.equal(viewerRun.status, 403);
      const bound = await ask(fixture.app, "GET", "/runs", {
        as: "support-app1",
      });
      assert.equal(bound.status, 403, "runs need an unscoped account");
      const overview = await page("support-app1", "/");
      assert.match(overview, /bound to one tenant/);
      assert.doesNotMatch(overview, /Recent runs/);
      // The header links only to pages the account may open.
      const nav = (html: string) =>
        [...html.matchAll(/<nav class="site-nav"[\s\S]*?<\/nav>/g)][0]?.[0] ??
          "";
      assert.doesNotMatch(
        nav(overview),
        /href="\/runs"|href="\/compare"|href="\/traces\/health"/,
      );
      assert.match(nav(overview), /href="\/traces\/find"/);
      assert.match(nav(operator), /href="\/runs"/);
      assert.equal(fixture.jobs.active, null);
    });
  }
});

Deno.test("withJobStates() lists a job that failed in this server as interrupted, not running", async () => {
  const running = {
    run_id: "run-20261130T100000Z-000000000001",
    kind: "external" as const,
    target_id: "t",
    verdict: "RUNNING" as const,
    state: "running" as const,
    cleanup: "unknown" as const,
    started_at: "2026-11-30T10:00:00.000Z",
    finished_at: null,
    duration_seconds: null,
    kept_in: "checkpoint" as const,
  };
  const jobs = (state: string) =>
    ({ get: () => Promise.resolve({ state }) }) as unknown as RunJobs;
  const [failed] = await withJobStates([running], jobs("failed"));
  assert.equal(failed!.state, "interrupted");
  assert.equal(failed!.verdict, "INCONCLUSIVE");
  const [still] = await withJobStates([running], jobs("running"));
  assert.equal(still!.state, "running");
  assert.deepEqual(await withJobStates([running], null), [running]);
});

Deno.test("nextSteps() for a FAIL saved as a regression says where that regression stands now", async () => {
  await withRunsApp(async (db, dataDir) => {
    const { fail, regressionId } = await failThenFixed(db, dataDir);
    const step = (saved: NonNullable<RunContext["saved"]>) =>
      nextSteps(fail, { savedAs: regressionId, regressionId: null, saved })
        .find((s) => s.command === `trace external-replay ${regressionId}`)
        ?.text ?? "";
    assert.match(
      step({ status: "pending", last_result: null, last_run_id: null }),
      /once the application is fixed, replay it\. A passing replay makes it enforced/,
    );
    assert.match(
      step({ status: "enforced", last_result: "PASS", last_run_id: "run-b" }),
      /now enforced: its replay run-b passed/,
    );
    assert.match(
      step({ status: "enforced", last_result: "FAIL", last_run_id: "run-c" }),
      /its latest replay run-c did not pass: the gate fails until a replay passes again/,
    );
  }, () => Promise.resolve());
});

Deno.test("nextSteps() for an unsaved FAIL saves first and replays only after the fix, never in one command", async () => {
  await withRunsApp(async (db, dataDir) => {
    const { fail } = await failThenFixed(db, dataDir);
    const steps = nextSteps(fail, { savedAs: null, regressionId: null });
    const save = steps.find((s) =>
      s.command?.startsWith("trace external-save")
    );
    assert.ok(save, JSON.stringify(steps));
    assert.doesNotMatch(save.command!, /&&|external-replay/);
    assert.match(save.text, /after you fix the application, replay it/);
  }, () => Promise.resolve());
});

Deno.test("a run's page links its trace events in the finder, on its test namespace with the run selected", async () => {
  let failId = "";
  let namespace = "";
  await withRunsApp(async (db, dataDir) => {
    const { fail } = await failThenFixed(db, dataDir);
    failId = fail.run_id;
    namespace = fail.namespaces.test;
  }, async (fixture) => {
    const body = await html(fixture, `/runs/${failId}`);
    const href = body.match(
      /href="(\/traces\/find\?[^"]+)"[^>]*>\s*This run&#39;s trace events/,
    )?.[1];
    assert.ok(href, "the events link is on the page");
    const params = new URLSearchParams(
      href.replaceAll("&amp;", "&").split("?")[1],
    );
    assert.equal(params.get("thread_id"), namespace);
    assert.equal(params.get("selected"), `${failId}:run`);
    const found = await fixture.app.request(
      at(href.replaceAll("&amp;", "&")),
      page(BEARER),
    );
    assert.equal(found.status, 200);
  });
});

/** `count` FAILs against an in-process target with a stale cache, each saved as a (pending) regression. */
async function pendingRegressions(
  db: TraceDb,
  dataDir: string,
  count: number,
): Promise<void> {
  const config = stagingConfig({ document_count: 2 });
  await registerTarget(db, {
    targetId: "staging-a",
    config,
    source: "registered",
  });
  for (let i = 0; i < count; i++) {
    const clock = new VirtualClock();
    const { report } = await runExternal(config, {
      db,
      dataDir,
      target: {
        id: "staging-a",
        base_url: config.base_url,
        source: "registered",
      },
      transport: new FakeTarget(clock, { staleCache: true }),
      clock,
    });
    assert.equal(report.verdict, "FAIL");
    await saveRegression(db, report.run_id);
  }
}

/**
 * A run of a config never registered (a FAIL: its answer cache stays stale),
 * as quickstart records its runs: under the config's own target.
 */
async function failUnregistered(
  db: TraceDb,
  dataDir: string,
): Promise<RunReport> {
  const config = stagingConfig({ document_count: 2 });
  const clock = new VirtualClock();
  const { report } = await runExternal(config, {
    db,
    dataDir,
    target: configTargetRef(config),
    transport: new FakeTarget(clock, { staleCache: true }),
    clock,
  });
  return report;
}

Deno.test("a retired target is hidden from the targets page and the overview's targets line, as external-targets hides it", async () => {
  await withRunsApp(
    async (db, dataDir) => {
      await pendingRegressions(db, dataDir, 1);
      await retireRunTarget(db, "staging-a", "replaced by staging-b");
    },
    async (fixture) => {
      const list = await json<{ targets: { target_id: string }[] }>(
        fixture,
        "/targets.json",
      );
      assert.deepEqual(list.targets.map((t) => t.target_id), []);
      assert.doesNotMatch(await html(fixture, "/targets"), /staging-a/);
      const twin = await json<{ targets: { target_id: string }[] }>(
        fixture,
        "/index.json",
      );
      assert.deepEqual(twin.targets, []);
      const overview = await html(fixture, "/");
      const line = overview.slice(
        overview.indexOf('<span class="board__label">Targets</span>'),
      );
      assert.doesNotMatch(line.slice(0, 600), /did not pass/);
      assert.equal(
        (await fixture.app.request(at("/targets/staging-a"), page(BEARER)))
          .status,
        200,
        "its own page stays, as its history does",
      );
    },
  );
});

Deno.test("with regressions saved and none enforced, the overview's gate is as neutral as the regressions page's", async () => {
  await withRunsApp(
    (db, dataDir) => pendingRegressions(db, dataDir, 2),
    async (fixture) => {
      const twin = await json<{ gate: GateResult }>(fixture, "/index.json");
      assert.equal(twin.gate.ok, true, "the gate itself passes, as in CI");
      assert.equal(twin.gate.enforced, 0);
      assert.equal(twin.gate.pending, 2);
      const sentence =
        "Nothing enforced yet: 2 pending regressions are known open bugs; a passing replay enforces each.";
      const overview = await html(fixture, "/");
      const line = overview.slice(
        overview.indexOf('<span class="board__label">Gate</span>'),
      );
      assert.match(
        line,
        new RegExp(
          `^<span class="board__label">Gate</span><span class="badge badge--neutral">UNKNOWN</span><span class="board__text">${sentence}</span>`,
        ),
      );
      assert.doesNotMatch(overview, /All 0 enforced/);
      const regressions = await html(fixture, "/regressions");
      assert.match(regressions, /badge--lg">UNKNOWN</);
      assert.ok(regressions.includes(sentence));
    },
  );
});

Deno.test("gateDisplay() says PASS only when something enforced held", () => {
  const gate = (
    enforced: number,
    pending: number,
    failing = 0,
  ): GateResult => ({
    schema: "trace.gate/1",
    ok: failing === 0,
    target_id: null,
    enforced,
    pending,
    failing: Array.from({ length: failing }, (_, i) => ({
      regression_id: `reg-${i}`,
      target_id: "t",
      last_result: "FAIL" as const,
      last_run_id: null,
      last_state: "completed" as const,
      recurrence: null,
      reason: "latest replay - was FAIL",
    })),
    pending_regressions: [],
    ledger_head: null,
  });
  const shown = (g: GateResult | null) => {
    const { state, status, sentence } = gateDisplay(g);
    return [state, status, sentence];
  };
  assert.deepEqual(shown(null).slice(0, 2), ["none", "unknown"]);
  assert.deepEqual(shown(gate(0, 0)).slice(0, 2), ["none", "unknown"]);
  assert.deepEqual(shown(gate(0, 1)), [
    "pending_only",
    "unknown",
    "Nothing enforced yet: 1 pending regression is a known open bug; a passing replay enforces each.",
  ]);
  assert.deepEqual(shown(gate(1, 0)), [
    "pass",
    "pass",
    "The 1 enforced regression passed its latest replay.",
  ]);
  assert.deepEqual(shown(gate(2, 1, 1)), [
    "fail",
    "fail",
    "1 of 2 enforced regressions did not pass the latest replay (reg-0: open its latest replay to see whether the saved failure recurred); 1 pending (known open bug).",
  ]);
  const killed = gate(3, 0, 2);
  killed.failing[1] = {
    ...killed.failing[1]!,
    last_result: "INCONCLUSIVE",
    last_state: "interrupted",
  };
  assert.deepEqual(shown(killed), [
    "fail",
    "fail",
    "2 of 3 enforced regressions did not pass the latest replay (reg-0: open its latest replay to see whether the saved failure recurred; reg-1: the latest replay did not finish; clean up what it left and replay again).",
  ]);
});

/** The opening tag of the element with `id` in `html`. */
function tagOf(html: string, id: string): string {
  const tag = html.match(new RegExp(`<[a-z]+ [^>]*id="${id}"[^>]*>`))?.[0];
  assert.ok(tag, `no element with id ${id}`);
  return tag;
}

Deno.test("Compare is in the navigation, and without runs asked for it offers the runs to pick from", async () => {
  let runs: RunReport[] = [];
  await withRunsApp(async (db) => {
    const [template] = await referenceRuns(db, ["correct"]);
    const external = { ...template!, kind: "external" as const };
    runs = await syntheticRuns(db, external, 3, {
      targets: ["staging-a", "staging-b"],
    });
  }, async (fixture) => {
    const body = await html(fixture, "/compare");
    const nav = body.match(/<nav class="site-nav"[\s\S]*?<\/nav>/)?.[0] ?? "";
    assert.match(nav, /<a href="\/compare" aria-current="page">Compare<\/a>/);
    assert.match(body, /<title>Compare runs · Trace<\/title>/);
    assert.doesNotMatch(body, /role="alert"/, "no refusal without a query");
    // The fields offer every completed external run, newest first.
    assert.match(tagOf(body, "compare-a"), /list="compare-runs"/);
    assert.match(tagOf(body, "compare-b"), /list="compare-runs"/);
    const offered = [
      ...body.matchAll(/<option value="(run-[^"]+)">([^<]+)<\/option>/g),
    ];
    assert.deepEqual(
      offered.map((m) => m[1]),
      runs.map((r) => r.run_id).reverse(),
    );
    assert.match(offered[0]![2]!, /^staging-a · INCONCLUSIVE · 2026-11-01 /);
    // Each run links the comparison with its target's run before it.
    const [first, , third] = runs;
    assert.ok(
      body.includes(
        `href="/compare?a=${first!.run_id}&amp;b=${third!.run_id}"`,
      ),
    );
    const twin = await json<{ runs: { run_id: string }[] }>(
      fixture,
      "/compare.json",
    );
    assert.equal(twin.runs.length, 3);
    // Elsewhere the entry is there, not current.
    const runsPage = await html(fixture, "/runs");
    assert.match(runsPage, /<a href="\/compare" >Compare<\/a>/);
  });
});

/** A page as a browser asks for it. */
async function browseAs(
  fixture: RunsFixture,
  path: string,
): Promise<Response> {
  return await fixture.app.request(
    at(path),
    page({ ...BEARER, accept: "text/html" }),
  );
}

/** The JSON twin of a refused page: 400 with the error `message`. */
async function assertTwinRefused(
  twin: Response,
  message: string,
): Promise<void> {
  assert.equal(twin.status, 400);
  assert.deepEqual(await twin.json(), {
    error: { code: "invalid_request", message },
  });
}

Deno.test("a refused comparison comes back as the compare page: the notice names the run to check, the form keeps what was typed", async () => {
  let reference = "";
  await withRunsApp(async (db) => {
    reference = (await referenceRuns(db, ["correct"]))[0]!.run_id;
  }, async (fixture) => {
    const browse = (path: string) => browseAs(fixture, path);
    // Run A alone: the page, its navigation, and Run B marked as missing.
    const typed = "run-20261129T214455Z-3f9a1c";
    const alone = await browse(`/compare?a=${typed}&b=`);
    assert.equal(alone.status, 400);
    const html = await alone.text();
    assert.match(html, /<title>Compare runs · Trace<\/title>/);
    assert.match(html, /<nav class="site-nav" aria-label="Main">/);
    assert.doesNotMatch(html, /Go to the start page|<h1>Bad request/);
    assert.match(tagOf(html, "compare-error"), /role="alert"/);
    assert.match(
      html,
      /Nothing was compared: check <a href="#compare-b">Run B<\/a>, then compare again\./,
    );
    assert.match(
      html,
      /give both runs, a=RUN_A and b=RUN_B \(the one that started first is before\)/,
    );
    const a = tagOf(html, "compare-a");
    assert.match(a, new RegExp(`value="${typed}"`));
    assert.match(a, /required/);
    assert.doesNotMatch(a, /aria-invalid/);
    const b = tagOf(html, "compare-b");
    assert.match(b, /value=""/);
    assert.match(b, /required/);
    assert.match(b, /aria-invalid="true"/);
    assert.match(b, /aria-describedby="compare-error"/);
    assert.match(
      html,
      /<form class="filters filters--text" method="get" action="\/compare">/,
    );
    // A run that is not an external run: that run is named, 400.
    const other = "run-20261129T214455Z-000000";
    const refused = await browse(`/compare?a=${reference}&b=${other}`);
    assert.equal(refused.status, 400);
    const refusedHtml = await refused.text();
    assert.match(refusedHtml, /it is a reference run/);
    assert.match(tagOf(refusedHtml, "compare-a"), /aria-invalid="true"/);
    assert.doesNotMatch(tagOf(refusedHtml, "compare-b"), /aria-invalid/);
    assert.match(
      tagOf(refusedHtml, "compare-b"),
      new RegExp(`value="${other}"`),
    );
    // A run id nobody recorded: 404, still the page with the form.
    const missing = await browse(`/compare?a=${other}&b=${typed}`);
    assert.equal(missing.status, 404);
    const missingHtml = await missing.text();
    assert.match(missingHtml, new RegExp(`no completed external run ${other}`));
    assert.match(tagOf(missingHtml, "compare-a"), /aria-invalid="true"/);
    // An input that is no run id at all is shown back escaped.
    const bad = await browse(
      `/compare?a=${encodeURIComponent('"><i>x')}&b=${typed}`,
    );
    assert.equal(bad.status, 400);
    const badHtml = await bad.text();
    assert.doesNotMatch(badHtml, /<i>x/);
    assert.match(tagOf(badHtml, "compare-a"), /value="&quot;&gt;&lt;i&gt;x"/);
    // A parameter the page does not read: the page, the runs as typed.
    const unknown = await browse(`/compare?a=${typed}&b=${other}&c=x`);
    assert.equal(unknown.status, 400);
    const unknownHtml = await unknown.text();
    assert.match(unknownHtml, /<title>Compare runs · Trace<\/title>/);
    assert.match(
      unknownHtml,
      /Nothing was compared for the reason below; correct it, then compare again\./,
    );
    assert.match(unknownHtml, /&quot;c&quot; is not one this page reads/);
    assert.match(
      tagOf(unknownHtml, "compare-a"),
      new RegExp(`value="${typed}"`),
    );
    assert.match(
      tagOf(unknownHtml, "compare-b"),
      new RegExp(`value="${other}"`),
    );
    assert.doesNotMatch(unknownHtml, /aria-invalid/);
    // A run given twice: that field is named.
    const twice = await browse(`/compare?a=${typed}&a=${other}&b=${other}`);
    assert.equal(twice.status, 400);
    const twiceHtml = await twice.text();
    assert.match(twiceHtml, /a may be given once/);
    assert.match(tagOf(twiceHtml, "compare-a"), /aria-invalid="true"/);
    assert.doesNotMatch(tagOf(twiceHtml, "compare-b"), /aria-invalid/);
    const unknownTwin = await browse(`/compare.json?a=${typed}&c=x`);
    assert.equal(unknownTwin.status, 400);
    assert.equal(
      (await unknownTwin.json()).error.message,
      'Invalid /compare query: "c" is not one this page reads (a, b); remove it',
    );
    // The twin answers with the error as before.
    await assertTwinRefused(
      await browse(`/compare.json?a=${typed}`),
      "Cannot compare: give both runs, a=RUN_A and b=RUN_B (the one that started first is before); only a was given",
    );
  });
});

Deno.test("a refused runs filter comes back as the runs page: the notice names the filter, the form keeps what was sent", async () => {
  await withRunsApp(async (db) => {
    await referenceRuns(db, ["correct"]);
  }, async (fixture) => {
    const browse = (path: string) => browseAs(fixture, path);
    // A value no option names: the page, the value kept and marked, 400.
    const bad = await browse("/runs?verdict=nope&kind=reference");
    assert.equal(bad.status, 400);
    const html = await bad.text();
    assert.match(html, /<title>Runs · Trace<\/title>/);
    assert.match(html, /<nav class="site-nav" aria-label="Main">/);
    assert.doesNotMatch(html, /Go to the start page|<h1>Bad request/);
    assert.match(tagOf(html, "runs-error"), /role="alert"/);
    assert.match(
      html,
      /No run was listed: check <a href="#filter-verdict">Verdict<\/a>, then filter again\./,
    );
    assert.match(html, /Invalid verdict &quot;nope&quot;: expected one of/);
    const verdict = tagOf(html, "filter-verdict");
    assert.match(verdict, /aria-invalid="true"/);
    assert.match(verdict, /aria-describedby="runs-error"/);
    assert.match(html, /<option value="nope" selected>nope<\/option>/);
    assert.match(
      html,
      /<option value="reference" selected>reference<\/option>/,
    );
    assert.doesNotMatch(tagOf(html, "filter-kind"), /aria-invalid/);
    assert.doesNotMatch(
      html,
      /id="runs-table"/,
      "nothing listed as if filtered",
    );
    // A filter given twice: that filter, its values as sent.
    const twice = await browse("/runs?state=running&state=completed");
    assert.equal(twice.status, 400);
    const twiceHtml = await twice.text();
    assert.match(twiceHtml, /state may be given once/);
    assert.match(tagOf(twiceHtml, "filter-state"), /aria-invalid="true"/);
    assert.match(
      twiceHtml,
      /<option value="running,completed" selected>running,completed<\/option>/,
    );
    // A parameter the page does not read, or a stale cursor: no filter named.
    for (const path of ["/runs?verdcit=FAIL", "/runs?cursor=not-a-cursor"]) {
      const response = await browse(path);
      assert.equal(response.status, 400, path);
      const body = await response.text();
      assert.match(
        body,
        /No run was listed for the reason below; correct it, then filter again\./,
        path,
      );
      assert.doesNotMatch(body, /aria-invalid/, path);
    }
    // What was sent is shown back escaped.
    const markup = await browse(`/runs?state=${encodeURIComponent('"><i>x')}`);
    assert.equal(markup.status, 400);
    assert.doesNotMatch(await markup.text(), /<i>x/);
    // The twin keeps the error.
    await assertTwinRefused(
      await browse("/runs.json?verdict=nope"),
      'Invalid verdict "nope": expected one of PASS, FAIL, INCONCLUSIVE',
    );
  });
});

Deno.test("a server that reads the ledger alone shows the regression a run was saved as, and offers no cleanup an unregistered target would refuse, as the full server does", async () => {
  let saved = "";
  let unregistered = "";
  const seed = async (db: TraceDb, dataDir: string) => {
    await pendingRegressions(db, dataDir, 1);
    saved = (await regressionsOf(db))[0]!.source_run_id;
    const report = await failUnregistered(db, dataDir);
    assert.equal(report.cleanup.cleanup_complete, false);
    unregistered = report.run_id;
  };
  const check = async (app: RunsFixture["app"]) => {
    const get = async <T>(path: string): Promise<T> => {
      const response = await app.request(at(path), page(BEARER));
      assert.equal(response.status, 200, path);
      return path.endsWith(".json")
        ? await response.json()
        : await response.text() as T;
    };
    const regression = regressionIdFor(saved);
    const detail = await get<RunDetail>(`/runs/${saved}.json`);
    assert.equal(detail.saved_as, regression);
    assert.equal(detail.target_registered, true);
    const body = await get<string>(`/runs/${saved}`);
    assert.match(body, new RegExp(`Saved as regression ${regression}`));
    assert.doesNotMatch(body, new RegExp(`trace external-save ${saved}`));
    const other = await get<RunDetail>(`/runs/${unregistered}.json`);
    assert.equal(other.target_registered, false);
    assert.ok(
      other.next_steps.every((step) =>
        step.command !== `trace external-cleanup ${unregistered}`
      ),
      "no cleanup command the target cannot take",
    );
  };
  // With the data directory, as trace serve reads runs, and from the ledger alone.
  await withRunsFixture({ seed }, (fixture) => check(fixture.app));
  await withUiApp(
    { adminToken: ADMIN_TOKEN, seed },
    (fixture) => check(fixture.app),
  );
});

Deno.test("a FAIL of a config never registered offers no save that would be refused, and says how to get a run that can be saved", async () => {
  let runId = "";
  await withRunsApp(async (db, dataDir) => {
    const report = await failUnregistered(db, dataDir);
    assert.equal(report.verdict, "FAIL");
    runId = report.run_id;
    // What the step says is what saving it answers.
    await assert.rejects(
      () => saveRegression(db, runId),
      /only a registered target can replay it/,
    );
  }, async (fixture) => {
    const detail = await json<RunDetail>(fixture, `/runs/${runId}.json`);
    const commands = detail.next_steps.map((s) => s.command);
    assert.ok(
      !commands.some((c) => c?.startsWith("trace external-save")),
      JSON.stringify(commands),
    );
    const step = detail.next_steps.find((s) =>
      /only a registered target can replay/.test(s.text)
    );
    assert.ok(step, JSON.stringify(detail.next_steps));
    assert.match(step.text, /was never registered/);
    assert.equal(
      step.command,
      "trace external-register --target NAME --config FILE",
    );
    const body = await html(fixture, `/runs/${runId}`);
    assert.doesNotMatch(body, new RegExp(`trace external-save ${runId}`));
  });
});

Deno.test("compare puts the run that started first before, whichever field names it, as trace external-compare does", async () => {
  let ids = { fail: "", pass: "" };
  await withRunsApp(async (db, dataDir) => {
    const { fail, pass } = await failThenFixed(db, dataDir);
    ids = { fail: fail.run_id, pass: pass.run_id };
    // The use case trace external-compare and the MCP tool call.
    const swapped = await compareStoredRuns(db, pass.run_id, fail.run_id);
    assert.equal(swapped.a.run_id, fail.run_id);
    assert.equal(swapped.b.run_id, pass.run_id);
    assert.equal(swapped.findings.new.length, 0);
  }, async (fixture) => {
    const { fail, pass } = ids;
    const twin = await json<ComparePageData>(
      fixture,
      `/compare.json?a=${pass}&b=${fail}`,
    );
    assert.equal(twin.comparison?.a.run_id, fail);
    assert.equal(twin.comparison?.findings.new.length, 0);
    assert.ok(twin.comparison!.findings.fixed.length > 0);
    const body = await html(fixture, `/compare?a=${pass}&b=${fail}`);
    assert.match(body, /FAIL before, PASS after: \d+ findings? fixed/);
    assert.doesNotMatch(body, /PASS before, FAIL after/);
    const sides = body.slice(body.indexOf("A (before)"));
    assert.ok(
      sides.indexOf(fail) < sides.indexOf(pass),
      "the older FAIL is A (before)",
    );
    assert.match(
      tagOf(body, "compare-order"),
      /role="note"/,
    );
    assert.match(body, /although it was given as\s+run B/);
    assert.doesNotMatch(body, /Swap A and B/);
    // Given in order, there is nothing to say.
    const ordered = await html(fixture, `/compare?a=${fail}&b=${pass}`);
    assert.doesNotMatch(ordered, /id="compare-order"/);
  });
});

Deno.test("a refused comparison links the run list of each run's target, and its fields fit a run id", async () => {
  let fail = "";
  await withRunsApp(async (db, dataDir) => {
    fail = (await failThenFixed(db, dataDir)).fail.run_id;
  }, async (fixture) => {
    const response = await browseAs(fixture, `/compare?a=${fail}&b=${fail}`);
    assert.equal(response.status, 400);
    const body = await response.text();
    assert.match(body, /it is the same run/);
    // The CLI command stays in the message; the page links the list.
    assert.match(body, /trace external-runs --target demo-staging/);
    assert.match(
      tagOf(body, "compare-runs-of"),
      /id="compare-runs-of"/,
    );
    assert.match(
      body.slice(body.indexOf('id="compare-runs-of"')),
      /^[^]*?<a class="nowrap" href="\/runs\?target=demo-staging">runs of <code>demo-staging<\/code><\/a>/,
    );
    assert.match(tagOf(body, "compare-a"), /class="run-id-input"/);
    assert.match(tagOf(body, "compare-b"), /class="run-id-input"/);
  });
});

Deno.test("a target never registered says to register and run it before a save, as external-save does when it refuses", async () => {
  let target = "";
  await withRunsApp(async (db, dataDir) => {
    target = (await failUnregistered(db, dataDir)).target.id;
  }, async (fixture) => {
    const body = await html(fixture, `/targets/${target}`);
    const regressions = body.slice(
      body.indexOf('id="regressions"'),
      body.indexOf('id="config"'),
    );
    assert.match(regressions, /No saved regressions/);
    assert.match(regressions, /only a registered target can replay them/);
    assert.match(
      regressions,
      /trace external-register --target NAME --config staging\.json[^\n]*\ntrace external-run --target NAME[^\n]*\ntrace external-save RUN_ID/,
    );
    // A short target id is kept on one line where the overview names it.
    const overview = await html(fixture, "/");
    assert.match(
      overview,
      new RegExp(`<a class="nowrap" href="/targets/${target}">`),
    );
  });
});

Deno.test("a registered target's empty Regressions still says to save a FAIL", async () => {
  await withRunsApp(async (db) => {
    await registerNamedTarget(db, "my-staging", stagingConfig());
  }, async (fixture) => {
    const body = await html(fixture, "/targets/my-staging");
    const regressions = body.slice(body.indexOf('id="regressions"'));
    assert.match(regressions, /Save a failing run of this target/);
    assert.doesNotMatch(regressions, /trace external-register --target NAME/);
  });
});

Deno.test("short ids stay on one line: the run header's target link and a regression's target", async () => {
  let fail = "";
  await withRunsApp(async (db, dataDir) => {
    fail = (await failThenFixed(db, dataDir)).fail.run_id;
  }, async (fixture) => {
    const run = await html(fixture, `/runs/${fail}`);
    assert.match(
      run,
      /<a class="nowrap" href="\/targets\/demo-staging">target page<\/a>/,
    );
    const regressions = await html(fixture, "/regressions");
    assert.match(
      regressions,
      /<a class="nowrap" href="\/targets\/demo-staging"><code>demo-staging<\/code><\/a>/,
    );
  });
});

Deno.test("a running run's page offers its trace events only once there are some", async () => {
  await withRunsApp(() => Promise.resolve(), async (fixture, jobs) => {
    await withDemoTarget(fixture.db, "demo", null, async () => {
      const started = await fixture.app.request(
        at("/targets/demo/run"),
        page({ ...BEARER, accept: "application/json" }, { method: "POST" }),
      );
      assert.equal(started.status, 202);
      const { run_id: runId } = await started.json();
      const running = await html(fixture, `/runs/${runId}`);
      assert.match(running, /this one is still running/);
      assert.doesNotMatch(running, /This run&#39;s trace events/);
      assert.match(running, /id="run-live"/);
      assert.match(running, /data-live-region="run-live"/);
      await jobs.wait(runId);
      const done = await html(fixture, `/runs/${runId}`);
      assert.match(done, /This run&#39;s trace events/);
      assert.doesNotMatch(done, /id="run-live"/);
    }, { windowSeconds: 2 });
  });
});

Deno.test("the Mem0 assessment is a page of the UI: its tables and code rendered, relative links kept as text, its Markdown in the twin", async () => {
  await withRunsApp(() => Promise.resolve(), async (fixture) => {
    const body = await html(fixture, "/reference/assessments/mem0");
    assert.match(body, /<nav class="site-nav" aria-label="Main">/);
    assert.match(
      body,
      new RegExp(`<title>Assessment: ${escapeRegExp(MEM0_ASSESSMENT.system)}`),
    );
    const article = body.slice(body.indexOf('<article class="document'));
    assert.match(
      article,
      /<h1>Mem0 \(mem0ai 3\.3\.1, local\): what Trace finds<\/h1>/,
    );
    assert.match(article, /<div class="table-wrap"><table>/);
    assert.match(article, /<pre><code>/);
    // staging.json sits beside the document, which this server does not serve.
    assert.doesNotMatch(article, /href="staging\.json"/);
    assert.match(article, /<code>staging\.json<\/code>/);
    assert.doesNotMatch(article, /^# Mem0/m);
    const twin = await json<{ markdown: string; document: string }>(
      fixture,
      "/reference/assessments/mem0.json",
    );
    assert.match(twin.markdown, /^# Mem0 \(mem0ai 3\.3\.1, local\)/);
    assert.equal(twin.document, MEM0_ASSESSMENT.document);
    const refused = await fixture.app.request(
      at("/reference/assessments/mem0?x=1"),
      page(BEARER),
    );
    assert.equal(refused.status, 400);
  });
});

Deno.test("markdownHtml() shows raw HTML as text and keeps only links a page can follow", () => {
  const html = markdownHtml(
    '<script>alert(1)</script>\n\nSee [a](https://example.com/a), [b](notes.md) and [c](javascript:alert(1)) ![i](x.png "t")\n',
  );
  assert.doesNotMatch(html, /<script/);
  assert.match(html, /&#60;script&#62;alert\(1\)&#60;\/script&#62;/);
  assert.match(html, /<a href="https:\/\/example\.com\/a">a<\/a>/);
  assert.doesNotMatch(html, /notes\.md|javascript:|<img/);
  assert.match(html, /, b and c i/);
});

Deno.test("markdownHtml() keeps a character reference in a link's address as one reference", () => {
  const html = markdownHtml(
    '[a](https://example.com/?x=1&amp;y=2) [b](https://example.com/?x=1&y="2")\n',
  );
  // The browser reads `&amp;` back as `&`: the address is ?x=1&y=2, not ?x=1&amp;y=2.
  assert.match(html, /<a href="https:\/\/example\.com\/\?x=1&amp;y=2">a<\/a>/);
  assert.match(
    html,
    /<a href="https:\/\/example\.com\/\?x=1&#38;y=&#34;2&#34;">b<\/a>/,
  );
});

Deno.test("pages refuse a query parameter they do not read rather than ignore it; the targets filter's q is read", async () => {
  const seed = (db: TraceDb) =>
    registerTarget(db, {
      targetId: "staging-a",
      config: stagingConfig(),
      source: "registered",
    });
  await withRunsApp(seed, async (fixture) => {
    // The targets table's filter keeps its text in the URL, to be shared.
    const filtered = await fixture.app.request(
      at("/targets?q=staging"),
      page(BEARER),
    );
    assert.equal(filtered.status, 200);
    // Its box is there, so the filter the link carries is seen applied.
    assert.match(await filtered.text(), /data-filter="targets-table"/);
    for (
      const path of [
        "/",
        "/targets",
        "/targets/staging-a",
        "/regressions",
        "/reference",
        "/traces/health",
      ]
    ) {
      const response = await fixture.app.request(
        at(`${path}?verdict=FAIL`),
        page(BEARER),
      );
      assert.equal(response.status, 400, path);
      assert.match(
        await response.text(),
        /verdict\\?(?:"|&quot;) is not one this page reads \((?:none|q)\); remove it/,
        path,
      );
    }
  });
});
