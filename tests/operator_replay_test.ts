/** Inert replay plans and drafts: complete, trusted, single-tenant selections, checked before any hook; drafts run nothing. */

import assert from "node:assert/strict";
import {
  freezePlan,
  listDrafts,
  readReplaySelection,
  type ReplaySelection,
} from "../lib/auth/mod.ts";
import type { TraceDb } from "../lib/db.ts";
import type { ServerApp } from "../routes/server_app.ts";
import { queryTraceEvents, type TraceEventPage } from "../lib/obs/query/mod.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { ask, auditRows, jsonOf, withHost } from "./operator_support.ts";

const TURN_1 =
  "/traces/replay-plan.json?agent_id=support-bot&root_trace_id=root-1&turn_id=turn-1&application_id=app-1";

/** Asks, as analyst-1, for a replay draft of the turn TURN_1 plans. */
function draftTurn1(app: ServerApp): Promise<Response> {
  return ask(app, "POST", "/traces/replays", {
    as: "analyst-1",
    json: {
      agent_id: "support-bot",
      root_trace_id: "root-1",
      turn_id: "turn-1",
      application_id: "app-1",
    },
  });
}

Deno.test("a plan of one turn freezes that turn's refs only, rejected candidates included, each authorized by the host", async () => {
  await withHost({}, async ({ app, store }) => {
    const plan = await jsonOf(
      await ask(app, "GET", TURN_1, { as: "analyst-1" }),
    );
    assert.deepEqual(
      plan.refs.map((r: { id: string; roles: string[] }) => [r.id, r.roles]),
      [
        ["doc-1", ["candidate_selected", "retrieved", "supplied"]],
        ["doc-2", ["candidate_rejected", "retrieved"]],
      ],
    );
    assert.equal(plan.events, 3);
    assert.equal(plan.execution_enabled, false);
    assert.equal(plan.network, "disabled");
    assert.equal(plan.side_effects, "disabled");
    assert.deepEqual(plan.requires, ["sandbox", "operator_approval"]);
    assert.match(plan.evidence_fingerprint, /^sha256:[0-9a-f]{64}$/);
    assert.equal(store.calls.resourceAuthorizer, 2);
    const root = await jsonOf(
      await ask(app, "GET", TURN_1.replace("&turn_id=turn-1", ""), {
        as: "analyst-1",
      }),
    );
    assert.deepEqual(root.refs.map((r: { id: string }) => r.id), [
      "doc-1",
      "doc-2",
      "doc-9",
    ]);
    assert.notEqual(root.evidence_fingerprint, plan.evidence_fingerprint);
    const again = await jsonOf(
      await ask(app, "GET", TURN_1, { as: "analyst-1" }),
    );
    assert.equal(
      again.evidence_fingerprint,
      plan.evidence_fingerprint,
      "the fingerprint is stable",
    );
  });
});

Deno.test("incomplete, untrusted and multi-tenant selections are refused before any host hook is called", async () => {
  await withHost({}, async ({ app, db, store }) => {
    const cases: [string, RegExp][] = [
      [
        "root_trace_id=root-partial&application_id=app-1",
        /left candidates unrecorded \(omitted_candidates\), so the window is incomplete/,
      ],
      ["root_trace_id=root-1", /spans more than one tenant/],
      [
        "root_trace_id=root-missing&application_id=app-1",
        /No event of this agent and root is in your scope/,
      ],
    ];
    await ingestEvents(db, [{
      application_id: "app-1",
      agent_id: "support-bot",
      root_trace_id: "root-lost",
      event_id: "evt-lost",
      kind: "trace_context_missing",
    }]);
    cases.push([
      "root_trace_id=root-lost&application_id=app-1",
      /lost its trace context/,
    ]);
    // A row whose stored metadata no longer decodes.
    await db.client.execute(
      "UPDATE obs_events SET meta = '{not json' WHERE event_id = 'evt-anon'",
    );
    cases.push([
      "root_trace_id=root-anon&application_id=app-1",
      /could not be decoded \(untrusted\)/,
    ]);
    for (const [query, message] of cases) {
      const response = await ask(
        app,
        "GET",
        `/traces/replay-plan.json?agent_id=support-bot&${query}`,
        { as: "admin-1" },
      );
      assert.ok([400, 404].includes(response.status), query);
      assert.match((await jsonOf(response)).error.message, message);
      const draft = await ask(app, "POST", "/traces/replays", {
        as: "admin-1",
        json: Object.fromEntries(
          new URLSearchParams(`agent_id=support-bot&${query}`),
        ),
      });
      assert.ok([400, 404].includes(draft.status), query);
      await draft.body?.cancel();
    }
    assert.equal(store.calls.resourceAuthorizer, 0);
    const drafts = await db.client.execute(
      "SELECT COUNT(*) AS n FROM auth_replay_drafts",
    );
    assert.equal(Number(drafts.rows[0]!.n), 0);
  });
});

/** A page reader whose pages misbehave the way `misbehave` says. */
function misbehaving(
  misbehave: (page: TraceEventPage, call: number) => TraceEventPage,
): typeof queryTraceEvents {
  let call = 0;
  return async (db, query) =>
    misbehave(await queryTraceEvents(db, { ...query, limit: 2 }), call++);
}

Deno.test("pagination that does not advance is refused: a repeated cursor, an empty page with more to come, an event twice", async (t) => {
  await withHost({}, async ({ db }) => {
    const selection: ReplaySelection = {
      agent_id: "support-bot",
      root_trace_id: "root-1",
      application_id: "app-1",
    };
    const read = (query: typeof queryTraceEvents) =>
      readReplaySelection(db as TraceDb, selection, { query });
    await t.step("a cursor that comes back unchanged", async () => {
      let first: string | null = null;
      await assert.rejects(
        read(misbehaving((page, call) => {
          if (call === 0) first = page.next_cursor;
          return call === 0 ? page : { ...page, next_cursor: first };
        })),
        /pages did not advance/,
      );
    });
    await t.step("an empty page that says there is more", async () => {
      await assert.rejects(
        read(misbehaving((page) => ({ ...page, events: [], has_more: true }))),
        /pages did not advance/,
      );
    });
    await t.step("the same event on two pages", async () => {
      let kept: TraceEventPage | null = null;
      await assert.rejects(
        read(misbehaving((page, call) => {
          kept ??= page;
          return call === 0 ? page : { ...page, events: kept.events };
        })),
        /pages did not advance/,
      );
    });
    await t.step("a page that reports untrusted rows", async () => {
      await assert.rejects(
        read(
          misbehaving((page) => ({ ...page, read_completeness: "untrusted" })),
        ),
        /untrusted/,
      );
    });
    await t.step(
      "well-behaved small pages read the whole selection",
      async () => {
        const events = await read(misbehaving((page) => page));
        assert.equal(freezePlan(selection, events).events, 5);
      },
    );
  });
});

Deno.test("the resource authorizer must answer exactly true for every ref", async () => {
  for (const answer of [false, 1, "true", {}, null, undefined]) {
    await withHost({}, async ({ app, store }) => {
      store.authorize = () => answer as boolean;
      const response = await ask(app, "GET", TURN_1, { as: "analyst-1" });
      assert.equal(response.status, 403, String(answer));
      assert.match(
        (await jsonOf(response)).error.message,
        /resourceAuthorizer did not confirm access/,
      );
    });
  }
  await withHost({}, async ({ app, store }) => {
    store.revoked.add("doc:doc-2");
    const response = await draftTurn1(app);
    assert.equal(
      response.status,
      403,
      "a rejected candidate's withdrawn access refuses the draft",
    );
    await response.body?.cancel();
  });
});

Deno.test("a replay draft is stored inert, with digested refs and its audit entry, and runs nothing", async () => {
  await withHost({}, async ({ app, db }) => {
    const count = async (table: string) =>
      Number(
        (await db.client.execute(`SELECT COUNT(*) AS n FROM ${table}`)).rows[0]!
          .n,
      );
    const events = await count("obs_events");
    const ledger = await count("ledger_entries");
    const response = await ask(app, "POST", "/traces/replays", {
      as: "support-app1",
      json: {
        agent_id: "support-bot",
        root_trace_id: "root-1",
        turn_id: "turn-1",
        reason: "check SUP-77",
      },
    });
    assert.equal(response.status, 201);
    const { draft, plan, audit } = await jsonOf(response);
    assert.equal(draft.execution_enabled, false);
    assert.equal(draft.kind, "observability_experiment");
    assert.equal(draft.status, "draft");
    assert.equal(
      draft.selection.application_id,
      "app-1",
      "the account's scope was filled in",
    );
    assert.match(draft.selection.user_id, /^hmac-sha256:/);
    assert.deepEqual(draft.refs.map((r: { id: string }) => r.id.slice(0, 12)), [
      "hmac-sha256:",
      "hmac-sha256:",
    ]);
    assert.equal(plan.refs.length, 2);
    const stored = await db.client.execute(
      "SELECT payload FROM auth_replay_drafts",
    );
    assert.equal(stored.rows.length, 1);
    for (const raw of ["doc-1", "doc-2", "user-ada"]) {
      assert.ok(
        !String(stored.rows[0]!.payload).includes(raw),
        `the draft holds ${raw}`,
      );
    }
    const entry = JSON.parse(String((await auditRows(db)).at(-1)!.payload));
    assert.equal(entry.entry_id, audit.entry_id);
    assert.equal(entry.targets.draft_id, draft.draft_id);
    assert.equal(entry.reason, "check SUP-77");
    assert.equal(await count("obs_events"), events, "no event was written");
    assert.equal(await count("ledger_entries"), ledger, "no run was recorded");
    // Reviewable: analysts see the drafts of their scope; viewers see none.
    const mine = await jsonOf(
      await ask(app, "GET", "/traces/replays.json", { as: "support-app1" }),
    );
    assert.deepEqual(mine.drafts.map((d: { draft_id: string }) => d.draft_id), [
      draft.draft_id,
    ]);
    const viewer = await ask(app, "GET", "/traces/replays.json", {
      as: "viewer-1",
    });
    assert.equal(viewer.status, 403);
    await viewer.body?.cancel();
  });
});

Deno.test("a draft and its audit entry are written together or not at all", async () => {
  await withHost({}, async ({ app, db }) => {
    await db.client.execute(
      "CREATE TRIGGER audit_broken BEFORE INSERT ON auth_audit BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    );
    const response = await draftTurn1(app);
    assert.equal(response.status, 503);
    await response.body?.cancel();
    const drafts = await db.client.execute(
      "SELECT COUNT(*) AS n FROM auth_replay_drafts",
    );
    assert.equal(Number(drafts.rows[0]!.n), 0);
  });
});

Deno.test("a draft that cannot be stored is audited as failed, never as succeeded", async () => {
  await withHost({}, async ({ app, db }) => {
    await db.client.execute(
      "CREATE TRIGGER drafts_broken BEFORE INSERT ON auth_replay_drafts BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    );
    const response = await draftTurn1(app);
    assert.equal(response.status, 500);
    await response.body?.cancel();
    const rows = await auditRows(db);
    assert.deepEqual(rows.map((r) => [r.action, r.outcome]), [
      ["replay.draft", "failed"],
    ]);
  });
});

Deno.test("read-only mode refuses drafts but still serves the inert plan", async () => {
  await withHost({ readOnly: true }, async ({ app }) => {
    const plan = await ask(app, "GET", TURN_1, { as: "analyst-1" });
    assert.equal(plan.status, 200);
    await plan.body?.cancel();
    const draft = await ask(app, "POST", "/traces/replays", {
      as: "analyst-1",
      json: {
        agent_id: "support-bot",
        root_trace_id: "root-1",
        application_id: "app-1",
      },
    });
    assert.equal(draft.status, 403);
    assert.match(
      await draft.text(),
      /read-only \(TRACE_UI_READ_ONLY=true\): creating replay drafts is refused/,
    );
  });
});

Deno.test("an inspection that has read an unrecorded candidate disables its replay draft with the reason, and offers no plan link", async () => {
  await withHost({}, async ({ app }) => {
    const partial =
      "/traces/inspect?application_id=app-1&root_trace_id=root-partial&agent_id=support-bot";
    const page = await (await ask(app, "GET", partial, { as: "admin-1" }))
      .text();
    const form = page.slice(
      page.indexOf('data-control="replay-draft"'),
      page.indexOf("</form>", page.indexOf('data-control="replay-draft"')),
    );
    assert.match(
      form,
      /<button type="submit" disabled>Create replay draft of the whole root<\/button>/,
    );
    assert.doesNotMatch(form, /replay-plan\.json/);
    assert.match(
      form,
      /data-disabled-reason="incomplete">No replay draft of the whole root can be made: a selection decision left candidates unrecorded \(omitted_candidates\), so the window is incomplete\.</,
    );
    const twin = await jsonOf(
      await ask(app, "GET", partial.replace("inspect?", "inspect.json?"), {
        as: "admin-1",
      }),
    );
    assert.equal(twin.replay.target.root_trace_id, "root-partial");
    assert.match(twin.replay.unavailable, /omitted_candidates/);
    // The event page's draft of the same turn says the same.
    const event = await (await ask(
      app,
      "GET",
      "/traces/events/evt-partial?application_id=app-1&root_trace_id=root-partial&agent_id=support-bot",
      { as: "admin-1" },
    )).text();
    assert.match(
      event,
      /<button type="submit" disabled>Create replay draft of turn turn-p<\/button>/,
    );
    assert.match(event, /No replay draft of turn turn-p can be made/);
    // A complete root keeps its control and its plan link.
    const whole = await (await ask(
      app,
      "GET",
      "/traces/inspect?application_id=app-1&root_trace_id=root-1&agent_id=support-bot&turn_id=turn-1",
      { as: "admin-1" },
    )).text();
    assert.match(
      whole,
      /<button type="submit" ?>Create replay draft of turn turn-1<\/button>/,
    );
    assert.match(
      whole,
      /href="\/traces\/replay-plan\.json\?agent_id=support-bot/,
    );
    assert.doesNotMatch(whole, /data-disabled-reason="incomplete"/);
    // The form's hidden fields carry their names and values, and nothing else.
    assert.match(
      whole,
      /<input type="hidden" name="root_trace_id" value="root-1">/,
    );
    assert.doesNotMatch(whole, /<input [^>]*\bkey="/);
  });
});

Deno.test("listDrafts() finds a user's drafts behind newer drafts of other users", async () => {
  await withHost({}, async ({ app, db }) => {
    const draft = async (root: string, turn: string) => {
      const response = await ask(app, "POST", "/traces/replays", {
        as: "analyst-1",
        json: {
          agent_id: "support-bot",
          root_trace_id: root,
          turn_id: turn,
          application_id: "app-1",
        },
      });
      assert.equal(response.status, 201);
      const { draft } = await jsonOf(response);
      // Drafts are listed newest first by their time: keep them apart.
      await new Promise((resolve) => setTimeout(resolve, 5));
      return draft.draft_id as string;
    };
    const ada = await draft("root-1", "turn-1");
    const anonymous = [
      await draft("root-anon", "turn-a"),
      await draft("root-anon", "turn-a"),
    ];
    const ids = async (scope: Parameters<typeof listDrafts>[1]) =>
      (await listDrafts(db, scope, { limit: 1 })).map((d) => d.draft_id);
    assert.deepEqual(
      await ids({ application_id: "app-1", user_id: "user-ada" }),
      [ada],
    );
    assert.deepEqual(await ids({ user_id: "user-ada" }), [ada]);
    assert.deepEqual(await ids({ application_id: "app-1", user_id: null }), [
      anonymous[1],
    ]);
    assert.deepEqual(await ids({ user_id: "user-bo" }), []);
  });
});
