/** trace.query_traces: scope from the principal only, arguments only narrow, explain adds lineage and analysis. */

import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { migrate } from "../lib/db.ts";
import {
  analyzeTrace,
  type McpPrincipal,
  traceLineage,
} from "../lib/mcp/mod.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import type { EventInput, TraceEvent } from "../lib/obs/mod.ts";
import { queryTraceEvents } from "../lib/obs/query/mod.ts";
import { RunJobs, RunLock } from "../lib/runs/mod.ts";
import { withDb } from "./_helpers.ts";
import { callError, callOk, memoryClient } from "./mcp_support.ts";

function event(
  id: string,
  overrides: Partial<EventInput> = {},
): EventInput {
  return {
    event_id: id,
    application_id: "app-a",
    agent_id: "agent-1",
    root_trace_id: "root-1",
    kind: "retrieval",
    started_at: `2026-09-01T12:00:0${id.slice(-1)}Z`,
    ...overrides,
  };
}

/** app-a anonymous (a1..a6, one root with lineage), app-a user u1 (u1-1), app-b anonymous (b1). */
const EVENTS: EventInput[] = [
  event("a1", {
    kind: "intent",
    resources: [{ type: "doc", id: "d1", version: "v2", role: "expected" }],
    attributes: { "intent.expected_artifact_types": "doc" },
  }),
  event("a2", {
    kind: "memory_delete",
    resources: [{ type: "doc", id: "d4", role: "deleted" }],
  }),
  event("a3", {
    kind: "selection",
    selection: {
      candidates: [
        {
          ref: { type: "doc", id: "d1", version: "v1" },
          rank: 0,
          selected: true,
          reason: "provider_rank",
        },
        {
          ref: { type: "doc", id: "d2" },
          rank: 1,
          selected: false,
          reason: "wrong_tenant",
        },
        {
          ref: { type: "doc", id: "d4" },
          rank: 2,
          selected: true,
          reason: "provider_rank",
        },
      ],
    },
  }),
  event("a4", {
    kind: "delivery",
    preview: "the answer quoted private-preview-text-7731",
    resources: [
      { type: "doc", id: "d1", version: "v1", role: "output_bound" },
      { type: "doc", id: "d3", role: "output_bound" },
    ],
  }),
  event("a5", { kind: "llm_call", status: "error", success: false }),
  event("a6", { kind: "trace_context_missing", root_trace_id: "root-2" }),
  event("u1-1", { user_id: "u1", root_trace_id: "root-u" }),
  event("b1", { application_id: "app-b", root_trace_id: "root-b" }),
];

async function withIndex(
  principal: McpPrincipal,
  fn: (client: Client) => Promise<void>,
  { maxOutputChars, more = [] }: {
    maxOutputChars?: number;
    /** Events beside {@link EVENTS}. */
    more?: EventInput[];
  } = {},
): Promise<void> {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    await ingestEvents(db, [...EVENTS, ...more]);
    const jobs = new RunJobs({ db, dataDir, lock: new RunLock() });
    const client = await memoryClient({
      db,
      dataDir,
      jobs,
      principal,
      allowTraceQueries: true,
      ...(maxOutputChars === undefined ? {} : { maxOutputChars }),
    });
    try {
      await fn(client);
    } finally {
      await client.close();
    }
  });
}

const ids = (answer: Record<string, unknown>) =>
  (answer.events as { event_id: string }[]).map((e) => e.event_id).sort();

const scoped: McpPrincipal = {
  name: "ops-a",
  role: "viewer",
  scope: { application_id: "app-a", user_id: null },
};

Deno.test("trace.query_traces reads only the principal's scope; arguments narrow it and never widen it", async () => {
  await withIndex(scoped, async (client) => {
    const all = await callOk(client, "trace.query_traces");
    assert.deepEqual(ids(all), ["a1", "a2", "a3", "a4", "a5", "a6"]);
    assert.equal(all.scope, 'application "app-a", anonymous users');

    for (
      const args of [
        { application_id: "app-b" },
        { user_id: "u1" },
        { application_id: "app-b", user_id: null },
      ]
    ) {
      assert.match(
        await callError(client, "trace.query_traces", args),
        /is outside this principal's trace scope/,
      );
    }
    // An exact id of another tenant's event finds nothing.
    assert.deepEqual(
      ids(await callOk(client, "trace.query_traces", { q: "b1" })),
      [],
    );
    assert.deepEqual(
      ids(await callOk(client, "trace.query_traces", { q: "u1-1" })),
      [],
    );
    // Repeating the bound value and narrowing further are fine.
    assert.deepEqual(
      ids(
        await callOk(client, "trace.query_traces", {
          application_id: "app-a",
          kinds: ["delivery"],
        }),
      ),
      ["a4"],
    );
  });
});

Deno.test("an unscoped principal narrows with arguments; pages carry a cursor bound to the scope", async () => {
  await withIndex(
    { name: "admin", role: "admin", scope: {} },
    async (client) => {
      assert.deepEqual(
        ids(await callOk(client, "trace.query_traces", {})),
        EVENTS.map((e) => e.event_id).sort(),
      );
      assert.deepEqual(
        ids(
          await callOk(client, "trace.query_traces", {
            application_id: "app-b",
          }),
        ),
        ["b1"],
      );
      const first = await callOk(client, "trace.query_traces", {
        application_id: "app-a",
        limit: 4,
      });
      assert.equal(first.has_more, true);
      const next = await callOk(client, "trace.query_traces", {
        application_id: "app-a",
        limit: 4,
        cursor: first.next_cursor,
      });
      assert.deepEqual(
        [...ids(first), ...ids(next)].sort(),
        ["a1", "a2", "a3", "a4", "a5", "a6", "u1-1"],
      );
      assert.match(
        await callError(client, "trace.query_traces", {
          application_id: "app-b",
          cursor: first.next_cursor,
        }),
        /cursor/i,
      );
    },
  );
});

Deno.test("explain=true adds the selected root's lineage and a deterministic analysis, never content", async () => {
  await withIndex(scoped, async (client) => {
    const answer = await callOk(client, "trace.query_traces", {
      root_trace_id: "root-1",
      explain: true,
      summary: true,
    });
    const explain = answer.explain as {
      root_trace_id: string;
      events_read: number;
      lineage: {
        lanes: Record<string, { id: string; versions: string[] }[]>;
        expected_artifact_types: string[];
        rejected_candidates: { id: string; reason: string }[];
      };
      analysis: { code: string; severity: string; refs: string[] }[];
    };
    assert.equal(explain.root_trace_id, "root-1");
    assert.equal(explain.events_read, 5);
    const lane = (name: string) =>
      explain.lineage.lanes[name]!.map((r) =>
        `${r.id}@${r.versions.join("|")}`
      );
    assert.deepEqual(lane("expected"), ["d1@v2"]);
    assert.deepEqual(lane("retrieved"), ["d1@v1", "d2@", "d4@"]);
    assert.deepEqual(lane("supplied"), ["d1@v1", "d4@"]);
    assert.deepEqual(lane("output_bound"), ["d1@v1", "d3@"]);
    assert.deepEqual(explain.lineage.expected_artifact_types, ["doc"]);
    assert.deepEqual(explain.lineage.rejected_candidates.map((c) => c.reason), [
      "wrong_tenant",
    ]);
    assert.deepEqual(
      explain.analysis.map((f) => [f.code, f.severity, f.refs]),
      [
        ["deleted_then_used", "problem", ["doc:d4"]],
        ["output_bound_not_supplied", "problem", ["doc:d3"]],
        ["supplied_not_output_bound", "info", ["doc:d4"]],
        ["version_mismatch", "warning", ["doc:d1"]],
        ["rejected_for_scope", "warning", ["doc:d2"]],
        ["error_events", "warning", []],
      ],
    );
    assert.equal((answer.summary as { events: number }).events, 5);
    // The preview exists (its size is metadata) but its content never leaves the index.
    const a4 = (answer.events as { event_id: string; preview: unknown }[])
      .find((e) => e.event_id === "a4")!;
    assert.deepEqual(a4.preview, { chars: 43, truncated: false });
    assert.doesNotMatch(JSON.stringify(answer), /private-preview-text/);

    // Without root_trace_id, the root of the newest event is explained.
    const newest = await callOk(client, "trace.query_traces", {
      explain: true,
    });
    assert.equal(
      (newest.explain as { root_trace_id: string }).root_trace_id,
      "root-2",
    );
  });
});

Deno.test("traceLineage() and analyzeTrace() do not depend on the order events arrive in", async () => {
  await withDb(async (db) => {
    await migrate(db, ALL_MIGRATIONS);
    await ingestEvents(db, EVENTS);
    const page = await queryTraceEvents(db, { root_trace_id: "root-1" });
    const events: TraceEvent[] = page.events;
    const reversed = [...events].reverse();
    assert.deepEqual(traceLineage(reversed), traceLineage(events));
    assert.deepEqual(analyzeTrace(reversed), analyzeTrace(events));
    assert.deepEqual(
      analyzeTrace([]).map((f) => f.code),
      ["no_lineage"],
    );
  });
});

Deno.test("a page over the output bound is shrunk, not cut, so its cursor skips no event", async () => {
  await withIndex(
    { name: "admin", role: "admin", scope: {} },
    async (client) => {
      const seen: string[] = [];
      let cursor: unknown = undefined;
      let pages = 0;
      do {
        const page = await callOk(client, "trace.query_traces", {
          limit: 8,
          ...(cursor === undefined ? {} : { cursor }),
        });
        assert.equal(page.truncated, undefined);
        if (pages === 0) {
          assert.ok((page.limit as number) < 8);
          assert.match(String(page.limit_note), /shrunk from 8 to/);
        }
        seen.push(...ids(page));
        cursor = page.next_cursor;
        pages++;
      } while (cursor !== null && pages < 20);
      assert.ok(pages > 1);
      assert.deepEqual(seen.sort(), EVENTS.map((e) => e.event_id).sort());
    },
    { maxOutputChars: 2_500 },
  );
});

Deno.test("tools/list describes every argument of trace.query_traces", async () => {
  await withIndex(scoped, async (client) => {
    const { tools } = await client.listTools();
    const tool = tools.find((t: Tool) => t.name === "trace.query_traces")!;
    const properties = tool.inputSchema.properties as Record<
      string,
      { description?: string }
    >;
    assert.equal(Object.keys(properties).length, 21);
    for (const [name, property] of Object.entries(properties)) {
      assert.ok((property.description ?? "").length > 10, name);
    }
    const said = (name: string) => properties[name]!.description!;
    assert.match(said("q"), /exact id, not a text search/);
    assert.match(said("q"), /event_id, root_trace_id, turn_id or run_id/);
    assert.match(said("user_id"), /null: anonymous events only/);
    assert.match(said("store"), /trace, conversation, tool_log; all/);
    assert.match(said("kinds"), /intent, .*retrieval, .*span/);
    assert.match(said("start_time"), /ISO 8601 with a zone/);
  });
});

Deno.test("trace.query_traces refuses a kind that is neither standard nor carried in scope", async () => {
  const custom = [
    event("c1", { kind: "rerank_step", root_trace_id: "root-c" }),
    event("b2", {
      application_id: "app-b",
      kind: "b_only_step",
      root_trace_id: "root-b",
    }),
  ];
  await withIndex(scoped, async (client) => {
    const refusal = await callError(client, "trace.query_traces", {
      kinds: ["nope"],
    });
    assert.match(
      refusal,
      /^Invalid arguments for trace\.query_traces: kinds\.0: must be one of agent_creation, .*intent, .*workflow_invocation, or a custom kind an event in this scope carries$/,
    );
    // The first kind refused is the one named.
    assert.match(
      await callError(client, "trace.query_traces", {
        kinds: ["delivery", "nope"],
      }),
      /kinds\.1: must be one of/,
    );
    // Another tenant's custom kind is refused in the same words: nothing leaks.
    assert.equal(
      await callError(client, "trace.query_traces", {
        kinds: ["b_only_step"],
      }),
      refusal,
    );
    // A custom kind carried in scope, and a standard kind nothing carries yet, are questions with answers.
    assert.deepEqual(
      ids(
        await callOk(client, "trace.query_traces", {
          kinds: ["rerank_step", "delivery"],
        }),
      ),
      ["a4", "c1"],
    );
    assert.deepEqual(
      ids(
        await callOk(client, "trace.query_traces", { kinds: ["memory_write"] }),
      ),
      [],
    );
  }, { more: custom });
});
