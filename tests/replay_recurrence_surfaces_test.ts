/**
 * Every surface that shows a replay that did not pass says what it showed
 * of the failure its regression was saved for, in the same words: the gate
 * (text and `--json`), the run page of the replay, the regressions page and
 * MCP's `trace.external_get`. The gate and the pages read each latest
 * replay's report once.
 */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import type { GateResult } from "../lib/ledger/regressions.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { gate, RunJobs } from "../lib/runs/mod.ts";
import type { RegressionsPageData } from "../routes/pages/regressions.tsx";
import type { TargetPageData } from "../routes/pages/targets.tsx";
import type { RunDetail } from "../routes/ui/run_view.ts";
import { ADMIN_TOKEN, at, page, withUiApp } from "./browser/_server.ts";
import { type RunsFixture, withRunsFixture } from "./browser/_runs.ts";
import { captureIo, withDb } from "./_helpers.ts";
import { type RecordingClient, recordingDb } from "./_obs_recording.ts";
import {
  RECURRENCE_TARGET,
  type ReplayRecurrences,
  SAVED_FAILURE,
  seedReplayRecurrences,
} from "./_replay_recurrences.ts";
import { killedReplay } from "./_unrecorded.ts";
import { callOk, pollRun, withToolClient } from "./mcp_support.ts";

const VECTORS = "residual_store:vector_records";

/** The sentence a page shows for each kind, as {@link recurrenceSentence} words it. */
function pageSentences(seeded: ReplayRecurrences) {
  return {
    recurred:
      `The failure that regression ${seeded.recurred.regression_id} was saved for came back: ${SAVED_FAILURE} failed again.`,
    other_failure:
      `This replay failed on something else: ${VECTORS}; the failure that regression ${seeded.other_failure.regression_id} was saved for (${SAVED_FAILURE}) did not recur.`,
    inconclusive:
      `INCONCLUSIVE: cannot say whether the failure that regression ${seeded.inconclusive.regression_id} was saved for (${SAVED_FAILURE}) came back.`,
  };
}

const KINDS = ["recurred", "other_failure", "inconclusive"] as const;

async function trace(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

Deno.test("trace external-gate says of each failing replay whether the saved failure recurred, in its reason and its --json", async () => {
  await withDb(async (db, dir) => {
    await migrate(db, ALL_MIGRATIONS);
    const seeded = await seedReplayRecurrences(db, dir);
    const text = await trace(["external-gate", "--data-dir", dir]);
    assert.equal(text.code, 1, text.err);
    const line = (kind: typeof KINDS[number]) =>
      `  ${seeded[kind].regression_id} (${RECURRENCE_TARGET}): latest replay ${
        seeded[kind].run_id
      } was `;
    const lines = text.out.split("\n");
    assert.ok(
      lines.includes(
        `${
          line("recurred")
        }FAIL: the bug is back: the saved failure recurred (${SAVED_FAILURE} failed again)`,
      ),
      text.out,
    );
    assert.ok(
      lines.includes(
        `${
          line("other_failure")
        }FAIL: the saved failure (${SAVED_FAILURE}) did not recur; it failed on something else: ${VECTORS}`,
      ),
      text.out,
    );
    assert.ok(
      lines.includes(
        `${
          line("inconclusive")
        }INCONCLUSIVE: it cannot tell whether the saved failure (${SAVED_FAILURE}) recurred; read its findings and replay again`,
      ),
      text.out,
    );

    const json = await trace(["external-gate", "--json", "--data-dir", dir]);
    assert.equal(json.code, 1, json.err);
    const gate = JSON.parse(json.out) as GateResult;
    for (const kind of KINDS) {
      const failure = gate.failing.find((f) =>
        f.regression_id === seeded[kind].regression_id
      );
      assert.equal(failure?.recurrence?.kind, kind);
      assert.equal(failure.last_run_id, seeded[kind].run_id);
    }
    const other = gate.failing.find((f) => f.recurrence?.kind === "recurred");
    assert.ok(other?.recurrence?.kind === "recurred");
    assert.deepEqual(
      other.recurrence.recurred.map((a) => `${a.code}:${a.subject}`),
      ["marker_retrievable:retrieval", "residual_store:cache_records"],
    );
  });
});

const BEARER = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function get(fixture: RunsFixture, path: string): Promise<Response> {
  const response = await fixture.app.request(at(path), page(BEARER));
  assert.equal(response.status, 200, path);
  return response;
}

/**
 * Checks that the page at `path` shows each kind's sentence and that its
 * JSON twin maps each regression to its kind; returns the page's HTML.
 */
async function assertPageRecurrences(
  fixture: RunsFixture,
  path: string,
  seeded: ReplayRecurrences,
): Promise<string> {
  const html = await (await get(fixture, path)).text();
  for (const sentence of Object.values(pageSentences(seeded))) {
    assert.ok(html.includes(sentence), `${path}: ${sentence}`);
  }
  const data = await (await get(fixture, `${path}.json`)).json() as
    | RegressionsPageData
    | TargetPageData;
  for (const kind of KINDS) {
    assert.equal(
      data.latest_recurrence[seeded[kind].regression_id]?.kind,
      kind,
      path,
    );
  }
  return html;
}

Deno.test("the run page of a replay that did not pass says, by its verdict, whether the saved failure came back", async () => {
  let seeded: ReplayRecurrences | undefined;
  await withRunsFixture({
    seed: async (db, dataDir) => {
      seeded = await seedReplayRecurrences(db, dataDir);
    },
  }, async (fixture) => {
    const sentences = pageSentences(seeded!);
    for (const kind of KINDS) {
      const runId = seeded![kind].run_id;
      const html = await (await get(fixture, `/runs/${runId}`)).text();
      const head = html.slice(html.indexOf('class="verdict__reason"'));
      assert.ok(
        head.slice(0, head.indexOf("</p>")).includes(sentences[kind]),
        `${kind}: ${head.slice(0, 800)}`,
      );
      const detail = await (await get(fixture, `/runs/${runId}.json`))
        .json() as RunDetail;
      assert.equal(detail.recurrence?.kind, kind);
      assert.equal(detail.recurrence_sentence, sentences[kind]);
    }
    const source = seeded!.recurred.source_run_id;
    const saved = await (await get(fixture, `/runs/${source}.json`))
      .json() as RunDetail;
    assert.equal(saved.recurrence, null, "the saved run is no replay");
  });
});

Deno.test("the regressions page says what each latest replay showed of the saved failure, and its gate names it", async () => {
  let seeded: ReplayRecurrences | undefined;
  await withRunsFixture({
    seed: async (db, dataDir) => {
      seeded = await seedReplayRecurrences(db, dataDir);
    },
  }, async (fixture) => {
    const s = seeded!;
    const html = await assertPageRecurrences(fixture, "/regressions", s);
    assert.ok(
      html.includes(
        `3 of 3 enforced regressions did not pass the latest replay (${s.recurred.regression_id}: the saved failure came back; ${s.other_failure.regression_id}: it failed on something else (the saved failure did not recur); ${s.inconclusive.regression_id}: INCONCLUSIVE, so it cannot say whether the saved failure came back).`,
      ),
      "the gate's sentence",
    );
  });
});

Deno.test("a target's page says what each latest replay of its regressions showed of the saved failure", async () => {
  let seeded: ReplayRecurrences | undefined;
  await withRunsFixture({
    seed: async (db, dataDir) => {
      seeded = await seedReplayRecurrences(db, dataDir);
    },
  }, async (fixture) => {
    await assertPageRecurrences(
      fixture,
      `/targets/${RECURRENCE_TARGET}`,
      seeded!,
    );
  });
});

/** How many times each run's report was read on its own (by run id) among `statements`. */
function reportReadsById(
  statements: RecordingClient["statements"],
): Map<string, number> {
  const reads = new Map<string, number>();
  for (const { sql, args } of statements) {
    if (
      sql !== "SELECT * FROM ledger_entries WHERE kind = ? AND entity_id = ?"
    ) {
      continue;
    }
    const [kind, runId] = args as [string, string];
    if (kind === "run") reads.set(runId, (reads.get(runId) ?? 0) + 1);
  }
  return reads;
}

/** How many times `targetId`'s newest external runs were listed among `statements`. */
function targetRunLists(
  statements: RecordingClient["statements"],
  targetId: string,
): number {
  return statements.filter(({ sql, args }) =>
    /^SELECT \* FROM ledger_entries WHERE kind (= \?|IN \(\?\)) AND target_id = \? ORDER BY seq DESC/
      .test(sql) &&
    (args as unknown[])[0] === "run" && (args as unknown[])[1] === targetId
  ).length;
}

Deno.test("the regressions page reads each latest replay's report once, and a target's page lists its recent runs once and takes them from there", async () => {
  let seeded: ReplayRecurrences | undefined;
  let killed = "";
  let recording: RecordingClient | undefined;
  let jobs: RunJobs | undefined;
  await withUiApp({
    adminToken: ADMIN_TOKEN,
    seed: async (db, dataDir) => {
      seeded = await seedReplayRecurrences(db, dataDir);
      killed = await killedReplay(dataDir, seeded.recurred.regression_id);
    },
    app: (db: TraceDb, dataDir: string) => {
      const recorded = recordingDb(db);
      recording = recorded.client;
      jobs = new RunJobs({ db: recorded.db, dataDir });
      return { db: recorded.db, runs: { dataDir, jobs } };
    },
  }, async ({ app }) => {
    try {
      const reads = async (path: string) => {
        recording!.statements.length = 0;
        const response = await app.request(at(path), page(BEARER));
        assert.equal(response.status, 200, path);
        const data = await response.json();
        return { data, reads: reportReadsById(recording!.statements) };
      };
      const s = seeded!;
      const listed = await reads("/regressions.json");
      assert.equal(listed.data.gate.failing[0].last_run_id, killed);
      assert.deepEqual(
        Object.fromEntries(listed.reads),
        Object.fromEntries(KINDS.map((kind) => [s[kind].run_id, 1])),
      );
      const target = await reads(`/targets/${RECURRENCE_TARGET}.json`);
      assert.equal(target.data.regressions[0].unfinished_replay.run_id, killed);
      assert.deepEqual(Object.fromEntries(target.reads), {});
      // Its recent runs are listed once, for the run list, the summary and
      // the regressions alike, and its registration is not read again.
      assert.equal(
        targetRunLists(recording!.statements, RECURRENCE_TARGET),
        1,
      );
      assert.equal(
        recording!.statements.filter(({ sql }) =>
          /FROM ledger_targets t .* WHERE t\.target_id = \?/s.test(sql)
        ).length,
        0,
      );
    } finally {
      await jobs?.close();
    }
  });
});

Deno.test("the gate reads each enforced regression's latest replay report once, beside a replay that never finished", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const seeded = await seedReplayRecurrences(db, dataDir);
    const killed = await killedReplay(dataDir, seeded.recurred.regression_id);
    const recorded = recordingDb(db);
    const judged = await gate(recorded.db, undefined, { dataDir });
    assert.equal(judged.failing[0]?.last_run_id, killed);
    assert.deepEqual(
      Object.fromEntries(reportReadsById(recorded.client.statements)),
      Object.fromEntries(KINDS.map((kind) => [seeded[kind].run_id, 1])),
    );
  });
});

Deno.test("trace.external_get of a replay that did not pass gives its recurrence and says it, pointing to trace.external_compare", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const seeded = await seedReplayRecurrences(db, dataDir);
    await withToolClient(db, dataDir, async (client) => {
      const sentences = pageSentences(seeded);
      const clause = (kind: typeof KINDS[number]) =>
        sentences[kind].replace(/\.$/, "").replace(/^Th/, "th");
      for (const kind of KINDS) {
        const got = await callOk(client, "trace.external_get", {
          run_id: seeded[kind].run_id,
        });
        assert.equal(
          (got.recurrence as { kind: string } | null)?.kind,
          kind,
        );
        const source = seeded[kind].source_run_id;
        assert.equal(
          got.next,
          kind === "inconclusive"
            ? `the replay is ${
              clause(kind)
            }; read findings (baseline, requests, controls, cleanup) to see what could not be established, then replay again`
            : `the replay FAILed: ${
              clause(kind)
            }; compare it with the saved run ${source} with trace.external_compare for the details`,
        );
      }
      const source = await callOk(client, "trace.external_get", {
        run_id: seeded.recurred.source_run_id,
      });
      assert.equal(source.recurrence, null, "the saved run is no replay");

      const replay = await callOk(client, "trace.external_replay", {
        regression_id: seeded.recurred.regression_id,
      });
      assert.match(
        String(replay.next),
        /; once it completed without passing, its recurrence says whether the failure the regression was saved for came back$/,
      );
      const fixed = await pollRun(client, String(replay.run_id));
      assert.equal(fixed.verdict, "PASS");
      assert.equal(fixed.recurrence, null, "a PASS has nothing to say");
    });
  });
});
