/** The MCP tools through the official SDK client, in process: list, schemas, refusals, bounds, reference tools. */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { validateToolName } from "@modelcontextprotocol/sdk/shared/toolNameValidation.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import {
  ProtocolError,
  type StagingTransport,
} from "../lib/contract/protocol.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { registerTarget, TargetIdSchema } from "../lib/ledger/targets.ts";
import { recordCleanup } from "../lib/ledger/cleanups.ts";
import {
  localToolPolicy,
  type McpToolContext,
  TOOL_NAMES,
} from "../lib/mcp/mod.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import {
  cleanUpRun,
  configTargetRef,
  retireRunTarget,
  runExternal,
  RunJobs,
} from "../lib/runs/mod.ts";
import { main } from "../cli.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import { EVIDENCE_CHECKS } from "../lib/runner/finding_guide.ts";
import { captureIo, stagingConfig, withDb } from "./_helpers.ts";
import { fakeRun, interruptedCheckpoint, withStagingA } from "./_unrecorded.ts";
import {
  assertDocumentedTools,
  callError,
  callOk,
  DOCUMENTED_TOOLS,
  pollRun,
  withToolClient,
} from "./mcp_support.ts";

const TARGET_ID = "staging-a";

/** A transport that holds the first test inventory after the deletion until released. */
function heldTarget(clock: VirtualClock) {
  const fake = new FakeTarget(clock);
  const reached = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  let deleted = false;
  let held = false;
  const transport: StagingTransport = {
    async post(op, body) {
      if (op === "delete") deleted = true;
      const test = String(body.namespace).startsWith("trace-test-");
      if (deleted && test && op === "inventory" && !held) {
        held = true;
        reached.resolve();
        await release.promise;
      }
      return await fake.post(op, body);
    },
  };
  return { transport, reached: reached.promise, release: release.resolve };
}

interface Setup {
  client: Client;
  context: McpToolContext;
  db: TraceDb;
}

/** A migrated data dir with one registered target, a job manager on a virtual clock, and a client. */
/** A completed run of a config never registered, recorded in `db`. */
async function runUnregisteredConfig(db: TraceDb, dataDir: string) {
  const clock = new VirtualClock();
  const config = stagingConfig({ document_count: 2 });
  const { report } = await runExternal(config, {
    db,
    dataDir,
    target: configTargetRef(config),
    transport: new FakeTarget(clock),
    clock,
  });
  return report;
}

async function withTools(
  fn: (setup: Setup) => Promise<void>,
  options: {
    overrides?: Partial<McpToolContext>;
    transport?: (clock: VirtualClock) => StagingTransport;
  } = {},
): Promise<void> {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    await registerTarget(db, {
      targetId: TARGET_ID,
      config: stagingConfig({ document_count: 2 }),
      source: "registered",
    });
    await withToolClient(
      db,
      dataDir,
      (client, context) => fn({ client, context, db }),
      options,
    );
  });
}

Deno.test("tools/list names exactly the documented tools and annotations; trace.query_traces only when enabled", async () => {
  await withTools(({ client }) => assertDocumentedTools(client, false));
  await withTools(({ client }) => assertDocumentedTools(client, true), {
    overrides: { allowTraceQueries: true },
  });
  assert.deepEqual(TOOL_NAMES, DOCUMENTED_TOOLS.map(([name]) => name));
});

Deno.test("every tool name is valid for MCP and every input schema is a strict object from its valibot schema", async () => {
  await withTools(async ({ client }) => {
    const { tools } = await client.listTools();
    for (const tool of tools) {
      assert.deepEqual(validateToolName(tool.name), {
        isValid: true,
        warnings: [],
      });
      assert.equal(tool.inputSchema.type, "object", tool.name);
      assert.equal(
        (tool.inputSchema as { additionalProperties?: unknown })
          .additionalProperties,
        false,
        tool.name,
      );
      assert.ok(tool.description && tool.description.length > 40, tool.name);
    }
    const start = tools.find((t: Tool) => t.name === "trace.external_start")!;
    const targetId = start.inputSchema.properties?.target_id as {
      pattern: string;
    };
    // The pattern is the ledger's own target-id rule, not a copy.
    assert.equal(
      targetId.pattern,
      (TargetIdSchema.pipe[1] as { requirement: RegExp }).requirement.source,
    );
    assert.deepEqual(start.inputSchema.required, ["target_id"]);
  }, { overrides: { allowTraceQueries: true } });
});

Deno.test("external tools refuse URL-like ids, unknown targets and URL, config or registration arguments", async () => {
  await withTools(async ({ client }) => {
    const urlLike = [
      "http://staging.example",
      "https://staging.example/api",
      "localhost:8787",
      "localhost",
      "127.0.0.1",
      "ops@staging",
      "staging.example/api",
    ];
    for (const tool of ["trace.external_start", "trace.external_plan"]) {
      for (const id of urlLike) {
        const message = await callError(client, tool, { target_id: id });
        assert.match(message, /not a URL or host/, `${tool} ${id}`);
        assert.match(message, /trace external-register/);
      }
    }
    assert.match(
      await callError(client, "trace.external_start", { target_id: "nope" }),
      /Cannot find target "nope"; register it with trace external-register/,
    );
    assert.match(
      await callError(client, "trace.external_start", {
        target_id: "staging-b",
      }),
      /Cannot find target "staging-b"; did you mean "staging-a"\? Or register it with trace external-register/,
      "a typo of a registered id is named",
    );
    const reserved = await callError(client, "trace.external_plan", {
      target_id: "cfg-0123456789ab",
    });
    assert.match(
      reserved,
      /^Cannot find target "cfg-0123456789ab"; ids starting with cfg- name configs run with --config alone, .*trace external-register --target NAME --config FILE$/,
      "no advice to register a cfg- id, which external-register refuses",
    );
    for (
      const extra of [
        { base_url: "http://127.0.0.1:8787" },
        { config: { base_url: "http://127.0.0.1:8787" } },
        { register: true },
      ]
    ) {
      const message = await callError(client, "trace.external_start", {
        target_id: TARGET_ID,
        ...extra,
      });
      assert.match(
        message,
        new RegExp(
          `^Invalid arguments for trace.external_start: ${
            Object.keys(extra)[0]
          }: unknown key`,
        ),
      );
      assert.match(message, /no URL, config or registration arguments/);
    }
    const pasted = await callError(client, "trace.external_start", {
      target_id: TARGET_ID,
      "jane.doe@example.com": 1,
    });
    assert.match(
      pasted,
      /^Invalid arguments for trace.external_start: \(root\): a key that is not a field name; remove it/,
    );
    assert.ok(!pasted.includes("jane"), "a pasted value is never repeated");
    assert.match(
      await callError(client, "trace.external_start", {}),
      /target_id: is required/,
    );
    // A misnamed argument is named, with the one it stands for.
    for (const key of ["target", "targte_id"]) {
      assert.equal(
        await callError(client, "trace.external_start", { [key]: TARGET_ID }),
        `Invalid arguments for trace.external_start: ${key}: unknown argument; did you mean target_id?`,
      );
    }
    // Nothing was started by any refused call.
    const targets = await callOk(client, "trace.external_targets");
    assert.equal((targets.targets as unknown[]).length, 1);
  });
});

Deno.test("trace.external_plan and trace.external_start refuse a target whose token_env this server's environment does not hold", async () => {
  await withTools(async ({ client, db }) => {
    await registerTarget(db, {
      targetId: "staging-token",
      config: stagingConfig({
        base_url: "https://127.0.0.1:1",
        token_env: "TRACE_TEST_UNSET_TOKEN",
      }),
      source: "registered",
    });
    for (const tool of ["trace.external_plan", "trace.external_start"]) {
      assert.match(
        await callError(client, tool, { target_id: "staging-token" }),
        /Cannot read bearer token: environment variable TRACE_TEST_UNSET_TOKEN is unset or empty; set it or remove token_env/,
        tool,
      );
    }
    const runs = await callOk(client, "trace.external_runs");
    assert.deepEqual(runs.runs, [], "nothing was started");
  });
});

Deno.test("trace.external_targets hides a retired target unless all is given, and marks it as external-targets --json does", async () => {
  await withTools(async ({ client, context, db }) => {
    await retireRunTarget(db, TARGET_ID, "replaced by staging-b");
    const active = await callOk(client, "trace.external_targets");
    assert.deepEqual(active.targets, []);
    assert.match(String(active.note), /^no active target is registered/);
    const all = await callOk(client, "trace.external_targets", { all: true });
    const [retired] = all.targets as Record<string, unknown>[];
    assert.equal(retired?.target_id, TARGET_ID);
    assert.equal(retired?.runs, 0);
    assert.deepEqual(
      (retired?.retired as { reason: string }).reason,
      "replaced by staging-b",
    );
    // The retirement as external-targets --json gives it: its schema and
    // the ledger entry that records it too.
    const cli = captureIo();
    const data = ["--data-dir", context.dataDir];
    assert.equal(
      await main(["external-targets", "--all", "--json", ...data], cli),
      0,
      cli.stderr(),
    );
    const expected = JSON.parse(cli.stdout());
    assert.deepEqual(all.targets, expected.targets);
    assert.deepEqual(
      Object.keys(retired?.retired as object).sort(),
      ["reason", "retired_at", "schema", "seq", "target_id"],
    );
    assert.match(
      await callError(client, "trace.external_targets", { all: "yes" }),
      /all: must be true or false/,
    );
  });
});

Deno.test("trace.external_targets carries what external-targets --json does: first and last run, and the targets known only from runs", async () => {
  await withTools(async ({ client, context, db }) => {
    await pollRun(
      client,
      (await callOk(client, "trace.external_start", { target_id: TARGET_ID }))
        .run_id as string,
    );
    // A run of a config never registered, as trace quickstart records them.
    const report = await runUnregisteredConfig(db, context.dataDir);
    const cli = captureIo();
    assert.equal(
      await main(
        ["external-targets", "--json", "--data-dir", context.dataDir],
        cli,
      ),
      0,
      cli.stderr(),
    );
    const expected = JSON.parse(cli.stdout());
    const listed = await callOk(client, "trace.external_targets");
    const [target] = listed.targets as Record<string, unknown>[];
    assert.equal(target?.runs, 1);
    assert.equal(target?.first_run_at, expected.targets[0].first_run_at);
    assert.equal(typeof target?.first_run_at, "string");
    assert.equal(target?.last_run_at, expected.targets[0].last_run_at);
    assert.deepEqual(listed.unregistered, expected.unregistered);
    assert.deepEqual(
      (listed.unregistered as { target_id: string; runs: number }[]).map((
        t,
      ) => [t.target_id, t.runs]),
      [[report.target.id, 1]],
    );
  });
});

Deno.test("trace.external_runs says which of its runs trace.external_save and trace.external_compare take, and that reference runs are not among them", async () => {
  await withTools(async ({ client }) => {
    const { tools } = await client.listTools();
    const description = tools.find((t: Tool) =>
      t.name === "trace.external_runs"
    )?.description ?? "";
    assert.match(
      description,
      /trace\.external_save takes a completed FAIL of kind external, kept_in ledger, whose target is registered/,
    );
    assert.match(
      description,
      /trace\.external_compare takes two runs of kind external, kept_in ledger, of one target/,
    );
    assert.match(
      description,
      /Reference runs \(kind reference\) are neither saved nor compared/,
    );
    // What the description says of a reference run is what the tools do.
    const ran = await callOk(client, "trace.reference_run", {
      systems: ["stale-cache"],
      trace: false,
    });
    const reference = (ran.rows as { run_id: string }[])[0]!.run_id;
    const listed = await callOk(client, "trace.external_runs", {
      kind: "reference",
    });
    assert.deepEqual(
      (listed.runs as { run_id: string; kind: string }[]).map((
        r,
      ) => [r.run_id, r.kind]),
      [[reference, "reference"]],
    );
    assert.match(
      await callError(client, "trace.external_save", { run_id: reference }),
      /it is a reference run/,
    );
    assert.match(
      await callError(client, "trace.external_compare", {
        run_a: reference,
        run_b: reference,
      }),
      /it is a reference run of system stale-cache/,
    );
  });
});

Deno.test("trace.external_runs and trace.external_regressions list what the other tools take", async () => {
  await withTools(async ({ client }) => {
    const empty = await callOk(client, "trace.external_runs");
    assert.deepEqual(empty.runs, []);
    assert.match(String(empty.note), /start one with trace.external_start/);
    const none = await callOk(client, "trace.external_regressions");
    assert.deepEqual(none.regressions, []);

    const failing = await pollRun(
      client,
      (await callOk(client, "trace.external_start", { target_id: TARGET_ID }))
        .run_id as string,
    );
    assert.equal(failing.verdict, "FAIL");
    const listed = await callOk(client, "trace.external_runs", {
      target_id: TARGET_ID,
      verdict: "FAIL",
    });
    const runs = listed.runs as { run_id: string; target_id: string }[];
    assert.deepEqual(runs.map((r) => r.run_id), [failing.run_id]);
    const saved = await callOk(client, "trace.external_save", {
      run_id: runs[0]!.run_id,
    });
    const regressions = await callOk(client, "trace.external_regressions", {
      target_id: TARGET_ID,
    });
    assert.deepEqual(
      (regressions.regressions as { regression_id: string; status: string }[])
        .map((r) => [r.regression_id, r.status]),
      [[
        (saved.regression as { regression_id: string }).regression_id,
        "pending",
      ]],
    );
    assert.match(
      await callError(client, "trace.external_runs", {
        target_id: "staging-b",
      }),
      /No target "staging-b" is registered or has a run; did you mean "staging-a"\?/,
    );
    assert.match(
      await callError(client, "trace.external_runs", { verdict: "fail" }),
      /verdict: must be one of PASS, FAIL, INCONCLUSIVE, RUNNING/,
    );
    // Refusals name the tools that list ids, not the CLI's commands.
    const unknown = await callError(client, "trace.external_replay", {
      regression_id: "reg-20260101T000000Z-000000",
    });
    assert.match(unknown, /list them with trace.external_regressions$/);
    const unsaved = await callError(client, "trace.external_save", {
      run_id: "run-20260101T000000Z-000000",
    });
    assert.match(unsaved, /list runs with trace.external_runs \(run ids/);
    assert.doesNotMatch(unknown + unsaved, /trace external-/);
  }, { transport: (clock) => new FakeTarget(clock, { staleCache: true }) });
});

Deno.test("trace.external_runs names the files it left out and how to learn why", async () => {
  await withTools(async ({ client, context }) => {
    const runId = "run-20260101T000000Z-00000000dead";
    await Deno.mkdir(`${context.dataDir}/external`, { recursive: true });
    await Deno.writeTextFile(`${context.dataDir}/external/${runId}.json`, "{");
    const listed = await callOk(client, "trace.external_runs");
    assert.deepEqual(listed.runs, []);
    assert.equal(listed.unreadable, 1);
    assert.match(
      String(listed.note),
      new RegExp(
        `^no run matches; start one with trace.external_start; 1 checkpoint or kept report file\\(s\\) cannot be read or trusted and are left out \\(\\S*/external/${runId}\\.json\\); trace.external_get on a file's run id names the problem$`,
      ),
    );
    assert.match(
      await callError(client, "trace.external_get", { run_id: runId }),
      /is not valid JSON/,
    );
  });
});

Deno.test("trace.external_get says what external-show says of a run: the regression it was saved as and a later cleanup", async () => {
  await withTools(async ({ client, context, db }) => {
    const failing = await pollRun(
      client,
      (await callOk(client, "trace.external_start", { target_id: TARGET_ID }))
        .run_id as string,
    );
    const runId = failing.run_id as string;
    assert.equal(failing.verdict, "FAIL");
    assert.equal(failing.saved_as, null);
    assert.match(String(failing.next), /save it with trace.external_save/);
    assert.match(String(failing.note), /trace external-cleanup/);
    // The report's "What to check", as the run page and the terminal lead with it.
    assert.ok(
      (failing.what_to_check as string[]).includes(
        `Check that ${EVIDENCE_CHECKS.cachedAnswer}.`,
      ),
      JSON.stringify(failing.what_to_check),
    );

    const saved = await callOk(client, "trace.external_save", {
      run_id: runId,
    });
    const regressionId =
      (saved.regression as { regression_id: string }).regression_id;
    // The application was fixed meanwhile: nothing is left to find.
    const cleanup = await cleanUpRun(db, runId, {
      dataDir: context.dataDir,
      transport: new FakeTarget(new VirtualClock()),
      clock: new VirtualClock(),
    });
    assert.equal(cleanup.status, "complete");

    const after = await callOk(client, "trace.external_get", {
      run_id: runId,
    });
    assert.equal(after.saved_as, regressionId);
    assert.equal(
      (after.later_cleanup as { cleanup_complete: boolean }).cleanup_complete,
      true,
    );
    assert.match(
      String(after.note),
      /deleted every id it issued .* and every store of both namespaces read 0 and neither marker was retrievable/,
    );
    assert.match(
      String(after.next),
      new RegExp(`trace.external_replay regression_id=${regressionId}`),
    );
    assert.doesNotMatch(String(after.next), /trace.external_save/);
  }, { transport: (clock) => new FakeTarget(clock, { staleCache: true }) });
});

Deno.test("trace.external_get of an interrupted run whose later cleanup found its text still served says to fix the application first", async () => {
  await withTools(async ({ client, context, db }) => {
    const runId = "run-20990101T000000Z-0000000000aa";
    const namespaces = {
      test: "trace-test-served",
      control: "trace-control-served",
    };
    // Its writer (pid 0) is gone: the run reads interrupted.
    await interruptedCheckpoint(context.dataDir, runId, {
      test: ["trace-doc-1", "trace-doc-2"],
      control: ["trace-doc-3"],
    }, { namespaces });
    const line =
      "the test marker is still retrievable through /query after cleanup: the application still serves the deleted text; fix it, then run trace external-cleanup again";
    await recordCleanup(db, {
      schema: "trace.cleanup/1",
      cleanup_id: "cleanup-served",
      run_id: runId,
      target_id: TARGET_ID,
      ids_from: "checkpoint",
      namespaces,
      issued: { test: 2, control: 1 },
      started_at: "2099-01-01T00:01:00.000Z",
      finished_at: "2099-01-01T00:01:02.000Z",
      markers_queried: true,
      outcome: {
        cleanup_complete: false,
        deletes: [
          { namespace: "test", ids: 2, acknowledged: true, error: null },
          { namespace: "control", ids: 1, acknowledged: true, error: null },
        ],
        polls: 3,
        limit_seconds: 2,
        interrupted: false,
        remaining: { test: null, control: null },
        marker_seen: { test: true, control: false },
        elapsed_seconds: 2,
        problems: [line],
      },
    });
    const got = await callOk(client, "trace.external_get", { run_id: runId });
    assert.equal(got.state, "interrupted");
    const later = got.later_cleanup as Record<string, unknown>;
    assert.equal(later.status, "incomplete");
    assert.equal(later.cleanup_complete, false);
    assert.equal(later.deleted_ids, 3);
    assert.equal(later.delete_requests, 2);
    const advice =
      `found the application still serving this run's text after deleting it: fix the application's delete path (or remove the records with the application's own tools), then run trace external-cleanup ${runId} again to confirm`;
    assert.ok(String(got.next).includes(advice), String(got.next));
    assert.ok(String(got.note).includes(advice), String(got.note));
    assert.doesNotMatch(
      `${got.next} ${got.note}`,
      /remove them (as note says|with trace external-cleanup)/,
    );
  });
});

Deno.test("a second start is refused naming the running run, and the first completes", async () => {
  let held: ReturnType<typeof heldTarget> | undefined;
  await withTools(async ({ client }) => {
    const first = await callOk(client, "trace.external_start", {
      target_id: TARGET_ID,
    });
    await held!.reached;
    const running = await callOk(client, "trace.external_get", {
      run_id: first.run_id,
    });
    assert.equal(running.state, "running");
    assert.equal(running.verdict, null);
    assert.equal((running.progress as { phase: string }).phase, "window");

    const refused = await callError(client, "trace.external_start", {
      target_id: TARGET_ID,
    });
    assert.match(refused, new RegExp(`run ${first.run_id} is still running`));
    const replay = await callError(client, "trace.external_replay", {
      regression_id: "reg-20260101T000000Z-000000",
    });
    assert.match(replay, new RegExp(`run ${first.run_id} is still running`));

    held!.release();
    const done = await pollRun(client, first.run_id as string);
    assert.equal(done.state, "completed");
    assert.equal(done.verdict, "PASS");
    assert.match(String(done.next), /PASS/);
  }, {
    transport: (clock) => (held = heldTarget(clock)).transport,
  });
});

Deno.test("a run stopped before its window ended reads interrupted, as trace.external_runs lists it", async () => {
  let held: ReturnType<typeof heldTarget> | undefined;
  await withTools(async ({ client, context }) => {
    const started = await callOk(client, "trace.external_start", {
      target_id: TARGET_ID,
    });
    const runId = started.run_id as string;
    await held!.reached;
    assert.equal(context.jobs.cancel(runId), true);
    held!.release();
    const stopped = await pollRun(client, runId);
    assert.equal(stopped.state, "interrupted");
    assert.equal(stopped.verdict, "INCONCLUSIVE");
    assert.match(String(stopped.next), /stopped before its window ended/);
    const listed = await callOk(client, "trace.external_runs", {
      state: "interrupted",
    });
    assert.deepEqual(
      (listed.runs as { run_id: string }[]).map((r) => r.run_id),
      [runId],
    );
  }, {
    transport: (clock) => (held = heldTarget(clock)).transport,
  });
});

Deno.test("a viewer principal can read but cannot start runs, save or run the reference suite", async () => {
  await withTools(async ({ client }) => {
    await callOk(client, "trace.external_targets");
    for (
      const [tool, args] of [
        ["trace.external_start", { target_id: TARGET_ID }],
        ["trace.external_save", { run_id: "run-20260101T000000Z-000000" }],
        ["trace.reference_run", { systems: ["correct"] }],
      ] as const
    ) {
      assert.match(
        await callError(client, tool, args),
        /needs the operator or admin role; viewer-1 is viewer/,
      );
    }
  }, {
    overrides: {
      principal: { name: "viewer-1", role: "viewer", scope: {} },
    },
  });
});

Deno.test("trace.query_traces is off by default and says how to turn it on", async () => {
  await withTools(async ({ client }) => {
    const { tools } = await client.listTools();
    assert.ok(!tools.some((t: Tool) => t.name === "trace.query_traces"));
    assert.match(
      await callError(client, "trace.query_traces", {}),
      /off on this server; start it with TRACE_MCP_ALLOW_TRACE_QUERIES=true/,
    );
    assert.match(
      await callError(client, "trace.no_such_tool", {}),
      /Unknown tool "trace.no_such_tool"/,
    );
    const pasted = await callError(client, "user@example.com password=x", {});
    assert.equal(
      pasted,
      "Unknown tool; tools/list names the tools this server offers",
    );
  });
});

Deno.test("answers longer than the output bound are cut and say which lists were cut", async () => {
  await withTools(async ({ client }) => {
    const full = await callOk(client, "trace.reference_list");
    const total = (full.systems as unknown[]).length;
    assert.equal(full.truncated, undefined);
    await withTools(async ({ client: bounded }) => {
      const cut = await callOk(bounded, "trace.reference_list");
      assert.ok(JSON.stringify(cut).length <= 3_000);
      const truncation = cut.truncated as {
        max_chars: number;
        cuts: { path: string; kept: number; total: number }[];
      };
      assert.equal(truncation.max_chars, 3_000);
      const systems = truncation.cuts.find((c) => c.path === "systems")!;
      assert.equal(systems.total, total);
      assert.equal((cut.systems as unknown[]).length, systems.kept);
      assert.deepEqual(
        cut.systems,
        (full.systems as unknown[]).slice(0, systems.kept),
      );
    }, { overrides: { maxOutputChars: 3_000 } });
  });
});

Deno.test("trace.external_get names a failed run's checkpoint, relative to the data directory over HTTP", async () => {
  // A transport that cannot be closed fails the job after its checkpoint was written.
  const unclosable = (clock: VirtualClock): StagingTransport => {
    const fake = new FakeTarget(clock);
    return {
      post: (op, body) => fake.post(op, body),
      close: () => Promise.reject(new Error("the transport cannot be closed")),
    };
  };
  for (const remote of [false, true]) {
    await withTools(async ({ client, context }) => {
      const started = await callOk(client, "trace.external_start", {
        target_id: TARGET_ID,
      });
      const runId = started.run_id as string;
      await context.jobs.wait(runId);
      const failed = await callOk(client, "trace.external_get", {
        run_id: runId,
      });
      assert.equal(failed.state, "failed");
      assert.match(
        String(failed.next),
        /in its checkpoint \(checkpoint_path\)/,
      );
      assert.equal(
        failed.checkpoint_path,
        remote
          ? `external/${runId}.json`
          : join(context.dataDir, "external", `${runId}.json`),
      );
      assert.equal(failed.checkpoint_path, started.checkpoint);
    }, { transport: unclosable, overrides: { remote } });
  }
});

Deno.test("trace.reference_explain says when a run's report is read from a file kept outside the ledger, as external-show does", async () => {
  for (const remote of [false, true]) {
    await withTools(async ({ client, context }) => {
      // A run recorded elsewhere, its checkpoint and report left here as if this ledger had refused it.
      const kept = join(context.dataDir, "external");
      const report = await withDb(async (otherDb, otherDir) => {
        await withStagingA(otherDb);
        const report = await fakeRun(otherDb, otherDir, { staleCache: true });
        await Deno.mkdir(kept, { recursive: true });
        await Deno.copyFile(
          join(otherDir, "external", `${report.run_id}.json`),
          join(kept, `${report.run_id}.json`),
        );
        return report;
      });
      await Deno.writeTextFile(
        join(kept, `${report.run_id}.report.json`),
        JSON.stringify(report),
      );
      const explained = await callOk(client, "trace.reference_explain", {
        code: "residual_store",
        run_id: report.run_id,
      });
      const run = explained.run as Record<string, unknown>;
      assert.equal(run.kept_in, "file");
      assert.equal(run.verdict, "FAIL");
      const path = remote
        ? `external/${report.run_id}.report.json`
        : join(kept, `${report.run_id}.report.json`);
      assert.equal(
        run.note,
        `this run is not in the ledger: its report is kept at ${path}, where Trace writes one only when the ledger cannot take it; a file is not verified like a ledger entry`,
      );
    }, { overrides: { remote } });
  }
});

Deno.test("trace.external_start of a registered target whose adapter is down says its config cannot change, not to fix base_url", async () => {
  const down = (): StagingTransport => ({
    post: () => Promise.reject(new Error("never sent")),
    probe: () =>
      Promise.reject(
        new ProtocolError("connect", "cannot connect to 127.0.0.1:9"),
      ),
  });
  await withTools(async ({ client }) => {
    const message = await callError(client, "trace.external_start", {
      target_id: TARGET_ID,
    });
    assert.match(
      message,
      /Cannot reach the staging adapter at .*: cannot connect to 127\.0\.0\.1:9; start it; the registered config of target staging-a cannot change, so if the adapter moved, register its new base_url under a new target id with trace external-register --target NEW_ID --config FILE and run trace\.external_start with target_id NEW_ID \(nothing was run or recorded\)$/,
    );
    assert.doesNotMatch(message, /fix base_url/);
    const runs = await callOk(client, "trace.external_runs");
    assert.deepEqual(runs.runs, [], "nothing was started");
  }, { transport: down });
});

Deno.test("an unexpected failure is a generic one-line tool error, its detail only in the log", async () => {
  const logged: string[] = [];
  const broken = {
    get: () => Promise.reject(new Error("secret detail\n    at x.ts:1:1")),
  } as unknown as RunJobs;
  await withTools(async ({ client }) => {
    const message = await callError(client, "trace.external_get", {
      run_id: "run-20260101T000000Z-000000",
    });
    assert.equal(
      message,
      "trace.external_get failed on an internal error; the server's log has the detail",
    );
    assert.deepEqual(logged, ["trace.external_get: secret detail"]);
  }, { overrides: { jobs: broken, log: (line) => logged.push(line) } });
});

Deno.test("reference tools: run, history, get, dashboard, ranking and explain agree with each other", async () => {
  await withTools(async ({ client }) => {
    const empty = await callOk(client, "trace.reference_dashboard");
    assert.deepEqual(empty.rows, []);

    const listed = await callOk(client, "trace.reference_list");
    const names = (listed.systems as { name: string }[]).map((s) => s.name);
    assert.ok(names.includes("correct") && names.includes("stale-cache"));
    const plans = await callOk(client, "trace.reference_plan", {
      systems: ["stale-cache"],
    });
    assert.deepEqual(
      (plans.plans as { system: string }[]).map((p) => p.system),
      ["stale-cache"],
    );
    assert.match(
      await callError(client, "trace.reference_plan", { systems: ["nope"] }),
      /systems\.0: must be one of correct, stale-cache/,
    );

    const ran = await callOk(client, "trace.reference_run", {
      systems: ["correct", "stale-cache"],
      trace: false,
    });
    const rows = ran.rows as {
      system: string;
      run_id: string;
      verdict: string;
    }[];
    assert.deepEqual(rows.map((r) => [r.system, r.verdict]), [
      ["correct", "PASS"],
      ["stale-cache", "FAIL"],
    ]);
    assert.equal(ran.mismatches, 0);

    const history = await callOk(client, "trace.reference_history", {
      system: "stale-cache",
    });
    const runs = history.runs as { run_id: string; matches: boolean }[];
    assert.deepEqual(runs.map((r) => r.run_id), [rows[1]!.run_id]);
    assert.equal(runs[0]!.matches, true);

    const shown = await callOk(client, "trace.reference_get", {
      run_id: rows[1]!.run_id,
    });
    assert.equal(shown.system, "stale-cache");
    assert.equal((shown.evaluation as { matches: boolean }).matches, true);
    // Polled as a run, a reference FAIL is no regression to save.
    const polled = await callOk(client, "trace.external_get", {
      run_id: rows[1]!.run_id,
    });
    assert.equal(polled.verdict, "FAIL");
    assert.equal(
      polled.note,
      `a reference run of system stale-cache; see trace.reference_get with run_id ${
        rows[1]!.run_id
      }`,
    );
    assert.match(String(polled.next), /trace.reference_get/);
    assert.doesNotMatch(String(polled.next), /trace.external_save/);

    const dashboard = await callOk(client, "trace.reference_dashboard");
    assert.deepEqual(
      (dashboard.rows as { system: string }[]).map((r) => r.system),
      ["correct", "stale-cache"],
    );
    assert.equal((dashboard.missing as string[]).length, names.length - 2);
    const ranking = await callOk(client, "trace.reference_ranking");
    assert.deepEqual(
      (ranking.ranking as { system: string }[]).map((r) => r.system),
      ["correct", "stale-cache"],
    );

    const report = shown.report as {
      findings: { code: string; subject: string; sample_indexes: number[] }[];
      samples: unknown[];
    };
    const explained = await callOk(client, "trace.reference_explain", {
      code: "residual_store",
      subject: "cache_records",
      run_id: rows[1]!.run_id,
    });
    assert.match(String(explained.meaning), /final sample/);
    assert.match(String((explained.checks as string[])[0]), /invalidated/);
    const run = explained.run as {
      findings: { sample_indexes: number[]; samples: unknown[] }[];
    };
    const expected = report.findings.filter((f) =>
      f.code === "residual_store" && f.subject === "cache_records"
    );
    assert.equal(run.findings.length, 1);
    assert.deepEqual(
      run.findings[0]!.samples,
      expected[0]!.sample_indexes.map((i) => report.samples[i]),
    );
    assert.ok(run.findings[0]!.samples.length > 0);

    // A run's findings carry the checks in the order its evidence points at them.
    const [resurrected] = (await callOk(client, "trace.reference_run", {
      systems: ["worker-resurrect"],
      trace: false,
    })).rows as { run_id: string }[];
    const back = await callOk(client, "trace.reference_explain", {
      code: "residual_store",
      subject: "vector_records",
      run_id: resurrected!.run_id,
    });
    const guide = back.checks as string[];
    const [found] = (back.run as { findings: { checks: string[] }[] })
      .findings;
    assert.match(found!.checks[0]!, /worker cannot write vectors back/);
    assert.notEqual(guide[0], found!.checks[0], "the evidence reorders");
    assert.deepEqual([...found!.checks].sort(), [...guide].sort());

    const absent = await callOk(client, "trace.reference_explain", {
      code: "control_lost",
      run_id: rows[0]!.run_id,
    });
    assert.match(
      String((absent.run as { note: string }).note),
      /has no control_lost finding; its findings are: erased:deletion/,
    );
    assert.match(
      await callError(client, "trace.reference_explain", { code: "nope" }),
      /code: must be one of /,
    );
    for (const subject of ["constructor", "toString", "\u202enope"]) {
      assert.match(
        await callError(client, "trace.reference_explain", {
          code: "transient_residual",
          subject,
        }),
        /subject: must be one of baseline, cache_records, /,
      );
    }
    assert.equal(
      await callError(client, "trace.reference_explain", {
        code: "residual_store",
        subject: "retrieval",
      }),
      "Invalid arguments for trace.reference_explain: subject: residual_store findings carry source_records, vector_records, cache_records, not retrieval",
    );
    assert.match(
      await callError(client, "trace.reference_plan", {
        systems: Array(40).fill("correct"),
      }),
      /systems: must name at most \d+ systems/,
    );
    assert.match(
      await callError(client, "trace.reference_get", {
        run_id: "run-20260101T000000Z-000000",
      }),
      /Cannot find reference run/,
    );
  });
});

Deno.test("trace.reference_get and reference show point an external run id at the external readers", async () => {
  await withTools(async ({ client, context, db }) => {
    const report = await runUnregisteredConfig(db, context.dataDir);
    assert.equal(
      await callError(client, "trace.reference_get", {
        run_id: report.run_id,
      }),
      `Cannot find reference run ${report.run_id}: it is an external run; trace.external_get reads it`,
    );
    const cli = captureIo();
    assert.equal(
      await main([
        "reference",
        "show",
        report.run_id,
        "--json",
        "--data-dir",
        context.dataDir,
      ], cli),
      2,
    );
    assert.equal(
      JSON.parse(cli.stdout()).error.message,
      `Cannot show reference run "${report.run_id}": it is an external run, not a reference run; see trace external show ${report.run_id} --data-dir ${context.dataDir}`,
    );
  });
});

Deno.test("trace.external_runs of kind reference, when none matches, points to trace.reference_run", async () => {
  await withTools(async ({ client }) => {
    const reference = await callOk(client, "trace.external_runs", {
      kind: "reference",
    });
    assert.equal(
      reference.note,
      "no run matches; start one with trace.reference_run",
    );
    const external = await callOk(client, "trace.external_runs", {
      kind: "external",
    });
    assert.equal(
      external.note,
      "no run matches; start one with trace.external_start",
    );
  });
});

/** Run ids of a run listing's page. */
function runIds(listed: Record<string, unknown>): string[] {
  return (listed.runs as { run_id: string }[]).map((run) => run.run_id);
}

Deno.test("trace.external_runs pages past its newest runs with offset, and next names the offset to pass", async () => {
  await withTools(async ({ client, context, db }) => {
    for (let i = 0; i < 5; i++) await fakeRun(db, context.dataDir);
    const all = runIds(await callOk(client, "trace.external_runs"));
    assert.equal(all.length, 5);

    const first = await callOk(client, "trace.external_runs", { limit: 2 });
    assert.deepEqual(runIds(first), all.slice(0, 2));
    assert.equal(first.total, 5);
    assert.equal(first.offset, 0);
    assert.equal(first.truncated, true);
    assert.equal(first.next_offset, 2);
    assert.equal(
      first.next,
      "3 older matching run(s) follow: call trace.external_runs again with offset 2 and the same filters",
    );
    const second = await callOk(client, "trace.external_runs", {
      limit: 2,
      offset: 2,
    });
    assert.deepEqual(runIds(second), all.slice(2, 4));
    assert.equal(second.next_offset, 4);
    const last = await callOk(client, "trace.external_runs", {
      limit: 2,
      offset: 4,
      target_id: TARGET_ID,
    });
    assert.deepEqual(runIds(last), all.slice(4));
    assert.equal(last.truncated, false);
    assert.equal(last.next_offset, null);
    assert.equal(last.next, null);

    const past = await callOk(client, "trace.external_runs", { offset: 9 });
    assert.deepEqual(past.runs, []);
    assert.equal(past.total, 5);
    assert.equal(
      past.note,
      "offset 9 is past the last of the 5 matching runs; pass a smaller offset, or none for the newest",
    );
    for (
      const [offset, problem] of [
        [-1, "must be at least 0"],
        [1.5, "must be an integer"],
        [1_000_001, "must be at most 1000000"],
        ["2", "must be a number"],
      ] as const
    ) {
      assert.match(
        await callError(client, "trace.external_runs", { offset }),
        new RegExp(`offset: ${problem}`),
      );
    }
  });
});

Deno.test("trace.external_runs keeps a page to what fits the output bound, so next_offset skips no run", async () => {
  await withTools(async ({ client, context, db }) => {
    for (let i = 0; i < 5; i++) await fakeRun(db, context.dataDir);
    const whole = await callOk(client, "trace.external_runs");
    const all = runIds(whole);
    // Room for about half the runs: the page must shrink, not be cut.
    const maxOutputChars = Math.ceil(JSON.stringify(whole).length * 0.6);
    await withTools(async ({ client: bounded }) => {
      const seen: string[] = [];
      let offset: number | null = 0;
      let pages = 0;
      while (offset !== null) {
        const page = await callOk(bounded, "trace.external_runs", { offset });
        assert.equal(typeof page.truncated, "boolean", "not cut by the bound");
        assert.ok(runIds(page).length < 5);
        if (page.next_offset !== null) {
          assert.match(
            String(page.next),
            /\(the output bound kept this page to \d+ runs\): call trace.external_runs again with offset \d+/,
          );
        }
        seen.push(...runIds(page));
        offset = page.next_offset as number | null;
        pages++;
      }
      assert.deepEqual(seen, all);
      assert.ok(pages > 1);
    }, { overrides: { db, dataDir: context.dataDir, maxOutputChars } });
  });
});

Deno.test("trace.reference_plan and trace.reference_run refuse an empty systems list instead of taking every system", async () => {
  await withTools(async ({ client, db }) => {
    for (const tool of ["trace.reference_plan", "trace.reference_run"]) {
      assert.equal(
        await callError(client, tool, { systems: [] }),
        `Invalid arguments for ${tool}: systems: must name at least one system; omit systems for every one`,
      );
    }
    const stored = await db.client.execute(
      "SELECT COUNT(*) AS n FROM ledger_entries WHERE kind = 'reference_run'",
    );
    assert.equal(Number(stored.rows[0]!.n), 0, "nothing was run");
    const { tools } = await client.listTools();
    for (const name of ["trace.reference_plan", "trace.reference_run"]) {
      const systems = tools.find((tool: Tool) => tool.name === name)!
        .inputSchema.properties!.systems as {
          minItems?: number;
          description?: string;
        };
      assert.equal(systems.minItems, 1, name);
      assert.match(String(systems.description), /at least one; omit/);
    }
  });
});

Deno.test("a read-only local server offers only the tools that read and refuses the others with the reason", async () => {
  await withTools(async ({ client }) => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.filter((tool: Tool) => !tool.annotations?.readOnlyHint),
      [],
    );
    assert.equal(tools.length, 13);
    assert.equal(
      await callError(client, "trace.external_save", {
        run_id: "run-20260101T000000Z-000000",
      }),
      "trace.external_save: This server is read-only (TRACE_UI_READ_ONLY=true): starting runs and saving regressions is refused",
    );
  }, { overrides: { refuseTool: localToolPolicy({ readOnly: true }) } });
  await withTools(async ({ client }) => {
    assert.equal((await client.listTools()).tools.length, 17);
  }, { overrides: { refuseTool: localToolPolicy({ readOnly: false }) } });
});

Deno.test("trace.external_runs keeps its boolean truncated when even one run is over the output bound", async () => {
  await withTools(async ({ context, db }) => {
    for (let i = 0; i < 2; i++) await fakeRun(db, context.dataDir);
    await withTools(async ({ client: bounded }) => {
      const answer = await callOk(bounded, "trace.external_runs");
      assert.ok(
        answer.truncated === undefined || typeof answer.truncated === "boolean",
        "a boolean or none, never the bound's object",
      );
      const cut = answer.output_truncated as { max_chars: number };
      assert.equal(cut.max_chars, 300);
      assert.ok(JSON.stringify(answer).length <= 300, "the answer fits");
    }, {
      overrides: { db, dataDir: context.dataDir, maxOutputChars: 300 },
    });
  });
});

/** A completed run of a target whose id is as long as ids go, so its listing is over a small bound alone. */
async function longTargetRun(db: TraceDb, dataDir: string): Promise<void> {
  const clock = new VirtualClock();
  const config = stagingConfig({ document_count: 2 });
  await runExternal(config, {
    db,
    dataDir,
    target: { id: "t".repeat(64), base_url: config.base_url, source: "config" },
    transport: new FakeTarget(clock),
    clock,
  });
}

Deno.test("trace.external_runs keeps a page's one run that is over the output bound, cut inside, and next_offset skips no run", async () => {
  await withTools(async ({ client, context, db }) => {
    for (let i = 0; i < 3; i++) await longTargetRun(db, context.dataDir);
    const all = runIds(await callOk(client, "trace.external_runs"));
    const one = await callOk(client, "trace.external_runs", { limit: 1 });
    // Shorter than a page of one run: the bound must cut inside the run.
    const maxOutputChars = JSON.stringify(one).length - 1;
    await withTools(async ({ client: bounded }) => {
      const first = await callOk(bounded, "trace.external_runs");
      assert.deepEqual(first.runs, [{ run_id: all[0] }]);
      assert.equal(first.truncated, true);
      assert.equal(first.next_offset, 1);
      const cut = first.output_truncated as { cuts: unknown[] };
      assert.deepEqual(cut.cuts, [{ path: "runs[0]", kept: 1, total: 11 }]);
      const seen: string[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const page = await callOk(bounded, "trace.external_runs", { offset });
        assert.ok(JSON.stringify(page).length <= maxOutputChars);
        assert.equal(typeof page.truncated, "boolean");
        seen.push(...runIds(page));
        offset = page.next_offset as number | null;
      }
      assert.deepEqual(seen, all);
    }, { overrides: { db, dataDir: context.dataDir, maxOutputChars } });
  });
});
