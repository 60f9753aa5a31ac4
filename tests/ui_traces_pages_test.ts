/** The trace pages and their JSON twins in memory: finder, inspection, comparison, events export, capabilities, links that keep the selection. */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import { runRootEventId } from "../lib/runs/trace_events.ts";
import { currentNavItem } from "../routes/ui/nav.ts";
import { evidenceSentence } from "../routes/ui/trace_words.ts";
import {
  eventPageHref,
  parseFinderParams,
  runEvidenceHref,
  withinScope,
} from "../routes/ui/trace_params.ts";
import { RUN_TRACE_APPLICATION, targetHref } from "../routes/ui/links.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { parity } from "../lib/obs/maint/mod.ts";
import { registerCoverageProfile } from "../lib/obs/mod.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { stagingConfig } from "./_helpers.ts";
import { ADMIN_TOKEN, at, page, withUiApp } from "./browser/_server.ts";
import {
  INCIDENT,
  LEGACY,
  seedBusyThreads,
  seedIncident,
  seedLegacy,
  T0,
} from "./browser/_trace_fixtures.ts";

async function seedAll(db: TraceDb): Promise<void> {
  await seedBusyThreads(db);
  await seedIncident(db);
  await seedLegacy(db);
}

type Fixture = Parameters<Parameters<typeof withUiApp>[1]>[0];

async function get(fixture: Fixture, path: string): Promise<Response> {
  return await fixture.app.request(
    at(path),
    page({ authorization: `Bearer ${ADMIN_TOKEN}` }),
  );
}

async function json(fixture: Fixture, path: string) {
  const response = await get(fixture, path);
  return { status: response.status, body: await response.json() };
}

function withApp(fn: (fixture: Fixture) => Promise<void>): Promise<void> {
  return withUiApp({ adminToken: ADMIN_TOKEN, seed: seedAll }, fn);
}

/** The incident's root id `task-42` used by a second application too. */
async function shareIncidentRoot(db: TraceDb): Promise<void> {
  await ingestEvents(db, [{
    application_id: "other-app",
    agent_id: "a",
    event_id: "x",
    root_trace_id: "task-42",
    kind: "retrieval",
  }]);
}

/** Every link of the page's main content to a trace page. */
function traceLinks(page: string): URL[] {
  const html = page.slice(page.indexOf("<main"), page.indexOf("</main>"));
  return [...html.matchAll(/href="(\/traces\/(?:find|inspect|compare)[^"#]*)/g)]
    .map((m) => new URL(m[1]!.replaceAll("&amp;", "&"), "http://x"));
}

Deno.test("the finder groups results by root and keeps the selected event in every link", async () => {
  await withApp(async (fixture) => {
    const query =
      `q=${INCIDENT.thread_id}&selected=${INCIDENT.selection_event}`;
    const response = await get(fixture, `/traces/find?${query}`);
    assert.equal(response.status, 200);
    const html = await response.text();
    assert.match(html, /“thread-incident” is a thread id \(6 events\)/);
    assert.match(html, /<h2 id="selected-title">Selected event<\/h2>/);
    assert.match(html, /class="group group--selected"/);
    assert.match(html, /class="event-line is-selected" aria-current="true"/);
    const links = traceLinks(html);
    assert.ok(links.length >= 5);
    for (const link of links) {
      const kept = link.pathname.startsWith("/traces/find")
        ? link.searchParams.get("selected")
        : new URLSearchParams(link.searchParams.get("from") ?? "").get(
          "selected",
        );
      assert.equal(
        kept,
        INCIDENT.selection_event,
        `${link} lost the selection`,
      );
    }
    // The overview is closed while an incident is selected.
    assert.match(html, /<details class="overview" id="overview"\s*>/);
  });
});

Deno.test("the finder's JSON twin carries groups, id matches, the selection and the bounded overview", async () => {
  await withApp(async (fixture) => {
    const { status, body } = await json(
      fixture,
      `/traces/find.json?application_id=support-app&selected=${INCIDENT.selection_event}`,
    );
    assert.equal(status, 200);
    assert.equal(body.provisioned, true);
    assert.equal(body.selected.matches.length, 1);
    assert.equal(body.page.groups.length, 20);
    assert.equal(body.page.groups[0].root_trace_id, INCIDENT.root_trace_id);
    assert.ok(body.page.next_cursor);
    assert.equal(body.overview.groups.length, 41);
    assert.equal(body.overview.groups_truncated, false);
    assert.equal(body.thread_evidence, null);
    const next = await json(
      fixture,
      `/traces/find.json?application_id=support-app&cursor=${body.page.next_cursor}`,
    );
    assert.equal(next.status, 200);
    const first = new Set(
      body.page.groups.map((g: { root_trace_id: string }) => g.root_trace_id),
    );
    for (const group of next.body.page.groups) {
      assert.ok(!first.has(group.root_trace_id));
    }
  });
});

Deno.test("the finder refuses unknown filters and cursors from other filters instead of ignoring them", async () => {
  await withApp(async (fixture) => {
    const unknown = await json(fixture, "/traces/find.json?thread=t-1");
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error.message, /did you mean thread_id/);
    const first = await json(fixture, "/traces/find.json");
    const moved = await json(
      fixture,
      `/traces/find.json?kind=selection&cursor=${first.body.page.next_cursor}`,
    );
    assert.equal(moved.status, 400);
    assert.match(moved.body.error.message, /different filters/);
    // An empty form field is no filter at all.
    const empty = await get(fixture, "/traces/find?application_id=&q=");
    assert.equal(empty.status, 200);
  });
});

Deno.test("the finder calls out a thread's refs served after deletion", async () => {
  await withApp(async (fixture) => {
    const html = await (await get(
      fixture,
      `/traces/find?thread_id=${INCIDENT.thread_id}`,
    )).text();
    assert.match(html, /1 deleted ref was served after deletion/);
    assert.match(html, /doc-deleted-7/);
    const { body } = await json(
      fixture,
      `/traces/find.json?thread_id=${INCIDENT.thread_id}`,
    );
    const use = body.thread_evidence.served_after_deletion[0];
    assert.equal(use.deleted_by.event_id, "task-42-delete");
    assert.equal(use.first_use.event_id, "task-42-llm");
  });
});

/** A later task of the incident's thread that binds the deleted document again. */
async function seedLaterAnswer(db: TraceDb): Promise<void> {
  await seedAll(db);
  await ingestEvents(db, [{
    application_id: INCIDENT.application_id,
    user_id: "user-1",
    agent_id: INCIDENT.agent_id,
    thread_id: INCIDENT.thread_id,
    root_trace_id: "task-43",
    event_id: "task-43-deliver",
    kind: "delivery",
    started_at: new Date(T0 + 200_000).toISOString(),
    resources: [{
      type: "document",
      id: INCIDENT.stale_doc,
      role: "output_bound",
    }],
  }]);
}

Deno.test("the finder counts a deleted ref's uses in the thread and inspection in its root, each saying so", async () => {
  await withUiApp(
    { adminToken: ADMIN_TOKEN, seed: seedLaterAnswer },
    async (fixture) => {
      const find = await (await get(
        fixture,
        `/traces/find?thread_id=${INCIDENT.thread_id}`,
      )).text();
      assert.match(
        find,
        /supplied to the model by 3 later events of this thread\./,
      );
      const inspect =
        `/traces/inspect?application_id=${INCIDENT.application_id}&root_trace_id=${INCIDENT.root_trace_id}`;
      const html = await (await get(fixture, inspect)).text();
      assert.match(
        html,
        /supplied to the model by 2 later events of this root \(3 in the whole thread\)\./,
      );
      const { body } = await json(
        fixture,
        inspect.replace("inspect", "inspect.json"),
      );
      assert.deepEqual(body.deletion_evidence.uses_counted_in, {
        application_id: INCIDENT.application_id,
        root_trace_id: INCIDENT.root_trace_id,
      });
      const use = body.deletion_evidence.served_after_deletion[0];
      assert.equal(use.uses, 2);
      assert.equal(use.thread_uses, 3);
    },
  );
});

Deno.test("inspection of a legacy trace never claims coverage and explains every empty panel", async () => {
  await withApp(async (fixture) => {
    const path =
      `/traces/inspect?application_id=${LEGACY.application_id}&root_trace_id=${LEGACY.root_trace_id}&agent_id=${LEGACY.agent_id}`;
    const html = await (await get(fixture, path)).text();
    assert.match(
      html,
      /<p class="verdict__reason">All stored events loaded; end-to-end coverage unknown.<\/p>/,
    );
    assert.doesNotMatch(html, /coverage complete|complete coverage/i);
    assert.equal(html.match(/The host did not record it/g)?.length, 6);
    assert.match(html, /Missing fields: outcome.artifact/);
    assert.match(html, /Missing fields: coverage_profile/);
    assert.match(html, /No selection recorded/);
    const { body } = await json(
      fixture,
      path.replace("inspect", "inspect.json"),
    );
    assert.equal(body.root.read_completeness, "complete");
    assert.equal(body.root.instrumentation_coverage, "unknown");
    assert.equal(body.root.outcome_verification, "unknown");
    assert.equal(body.artifact.state, "no_recorded_evidence");
    assert.equal(body.contract.state, "no_recorded_evidence");
    assert.equal(
      body.statement,
      "All stored events loaded; end-to-end coverage unknown.",
    );
  });
});

Deno.test("inspection shows lineage lanes, the 64-candidate selection and filters its timeline by kind and lane", async () => {
  await withApp(async (fixture) => {
    const base =
      `/traces/inspect?application_id=support-app&root_trace_id=task-42&agent_id=support-bot&selected=${INCIDENT.selection_event}`;
    const html = await (await get(fixture, base)).text();
    assert.match(html, /Expected <span class="meta">\(2\)<\/span>/);
    assert.match(html, /Output-bound <span class="meta">\(2\)<\/span>/);
    const table = html.slice(html.indexOf('id="candidates"'));
    assert.equal(
      table.slice(0, table.indexOf("</table>")).match(/<tr[ >]/g)!.length,
      65,
      "64 candidates and the header row",
    );
    assert.match(html, /12 more candidates existed but were not recorded/);
    assert.equal(html.match(/class="wf-row/g)!.length, 6);
    const kind = await (await get(fixture, `${base}&kind=selection`)).text();
    assert.equal(kind.match(/class="wf-row/g)!.length, 1);
    const lane = await (await get(fixture, `${base}&lane=output_bound`)).text();
    assert.equal(lane.match(/class="wf-row/g)!.length, 1);
    assert.doesNotMatch(lane, /id="lane-expected"/);
    const { body } = await json(
      fixture,
      `${base.replace("inspect", "inspect.json")}&lane=supplied`,
    );
    assert.deepEqual(body.shown_event_ids, [
      INCIDENT.selection_event,
      "task-42-llm",
    ]);
    assert.equal(body.root.events.length, 6, "the whole root is still read");
    // The finder's thread selection narrows the read; one link reads the whole root.
    const inThread = await (await get(
      fixture,
      `${base}&thread_id=none-of-these&from=q%3Dx`,
    )).text();
    assert.match(inThread, /No stored event of this root is in your scope/);
    const partial = await (await get(
      fixture,
      `${base}&start_time=2026-11-29T10:01:40.200Z`,
    )).text();
    assert.match(partial, /3 events of agent support-bot/);
    assert.match(
      partial,
      /href="\/traces\/inspect\?application_id=support-app&amp;root_trace_id=task-42&amp;agent_id=support-bot&amp;selected=task-42-select">Read the whole root/,
    );
    assert.equal(body.root.instrumentation_coverage, "complete");
  });
});

Deno.test("inspection refuses a root id two applications use, and a missing root_trace_id", async () => {
  await withApp(async (fixture) => {
    await shareIncidentRoot(fixture.db);
    const ambiguous = await json(
      fixture,
      "/traces/inspect.json?root_trace_id=task-42",
    );
    assert.equal(ambiguous.status, 409);
    assert.match(ambiguous.body.error.message, /add application_id/);
    const missing = await json(fixture, "/traces/inspect.json?agent_id=a");
    assert.equal(missing.status, 400);
  });
});

Deno.test("comparison reads each root on its own and runs nothing", async () => {
  await withApp(async (fixture) => {
    const { status, body } = await json(
      fixture,
      "/traces/compare.json?baseline=busy-3-r0&baseline_application_id=support-app&candidate=task-42&candidate_application_id=support-app",
    );
    assert.equal(status, 200);
    assert.equal(body.executed, false);
    assert.equal(body.baseline.events, 4);
    assert.equal(body.candidate.events, 6);
    assert.equal(body.comparison.identical, false);
    const same = await json(
      fixture,
      "/traces/compare.json?baseline=task-42&candidate=task-42",
    );
    assert.equal(same.body.comparison.identical, true);
    // An id in the path that no event could carry is named as the path's id.
    const badId = await json(fixture, "/traces/events/%E2%80%AE.json");
    assert.equal(badId.status, 400);
    assert.match(
      JSON.stringify(badId.body),
      /Invalid event request: event_id: must not contain control/,
    );
    // Roots with no stored event compare as unknown, never as identical.
    const missing = await json(
      fixture,
      "/traces/compare.json?baseline=nope&candidate=nope-2",
    );
    assert.equal(missing.status, 200);
    assert.equal(missing.body.comparison, null);
    const missingPage = await (await get(
      fixture,
      "/traces/compare?baseline=nope&candidate=task-42",
    )).text();
    assert.doesNotMatch(missingPage, /IDENTICAL|No structural difference/i);
    assert.match(missingPage, /The baseline root has no stored event/);
    assert.match(
      missingPage,
      /Nothing: no stored event in your scope has this root id/,
    );
    assert.equal(
      missingPage.match(/All stored events loaded/g)?.length,
      1,
      "only the candidate, which has events, claims a whole read",
    );
    const refused = await json(
      fixture,
      "/traces/compare.json?baseline=task-42&candidate=task-42&kind=selection",
    );
    assert.equal(refused.status, 400);
    const html = await (await get(fixture, "/traces/compare?baseline=task-42"))
      .text();
    assert.match(html, /Name a baseline root and a candidate root/);
  });
});

Deno.test("events.json pages one store, takes store=all as a bounded snapshot, and refuses what it cannot apply", async () => {
  await withApp(async (fixture) => {
    const first = await json(fixture, "/traces/events.json?limit=5");
    assert.equal(first.status, 200);
    assert.equal(first.body.store, "trace");
    assert.equal(first.body.events.length, 5);
    const next = await json(
      fixture,
      `/traces/events.json?limit=5&cursor=${first.body.next_cursor}`,
    );
    assert.equal(next.status, 200);
    assert.notEqual(
      next.body.events[0].event_id,
      first.body.events[0].event_id,
    );
    const all = await json(fixture, "/traces/events.json?store=all");
    assert.equal(all.body.store, "all");
    assert.equal(all.body.stores.trace.rows, 489);
    assert.equal(all.body.stores.conversation.rows, 0);
    assert.equal(all.body.events.length, 489);
    assert.equal(all.body.read_completeness, "complete");
    const pagedAll = await json(
      fixture,
      `/traces/events.json?store=all&cursor=${first.body.next_cursor}`,
    );
    assert.equal(pagedAll.status, 400);
    assert.match(pagedAll.body.error.message, /page one store at a time/);
    const pageParam = await json(
      fixture,
      "/traces/events.json?selected=task-42-select",
    );
    assert.equal(pageParam.status, 400);
    assert.match(pageParam.body.error.message, /does not select events/);
    const text = JSON.stringify(all.body);
    assert.ok(!text.includes('"content"'), "no preview content in an export");
  });
});

Deno.test("capabilities.json says which host hooks are absent and what the operator may do", async () => {
  await withApp(async (fixture) => {
    const { status, body } = await json(fixture, "/traces/capabilities.json");
    assert.equal(status, 200);
    assert.deepEqual(body.hooks, {
      identityResolver: false,
      artifactResolver: false,
      resourceAuthorizer: false,
    });
    const byName = Object.fromEntries(
      body.actions.map((a: { action: string }) => [a.action, a]),
    );
    assert.equal(byName["trace.read"].allowed, true);
    assert.equal(byName["artifact.lookup"].allowed, false);
    assert.equal(byName["artifact.lookup"].reason, "hook_missing");
    // Inspection names the missing hook instead of offering a lookup.
    const html = await (await get(
      fixture,
      "/traces/inspect?application_id=support-app&root_trace_id=task-42",
    )).text();
    assert.match(
      html,
      /Current artifact state is not looked up here: This server has no artifactResolver: the host program passes one to createApp to enable this; whoever runs this server can add it \(Operators, in the README\)/,
    );
    assert.doesNotMatch(html, /answers 501/);
  });
});

Deno.test("query parameters only narrow the operator's tenant scope", () => {
  const scope = { application_id: "app-1", user_id: null };
  assert.deepEqual(withinScope({ thread_id: "t" }, scope), {
    thread_id: "t",
    application_id: "app-1",
    user_id: null,
  });
  assert.throws(
    () => withinScope({ application_id: "app-2" }, scope),
    /outside this account's scope/,
  );
  assert.throws(
    () =>
      parseFinderParams(new URLSearchParams("user_id=someone"), {
        user_id: null,
      }),
    /outside this account's scope/,
  );
});

Deno.test("runEvidenceHref() opens the finder on the run's test namespace with its root event selected", () => {
  const href = runEvidenceHref("run-1", "trace-test-abc");
  const url = new URL(href, "http://x");
  assert.equal(url.pathname, "/traces/find");
  assert.equal(url.searchParams.get("thread_id"), "trace-test-abc");
  assert.equal(url.searchParams.get("selected"), runRootEventId("run-1"));
  assert.equal(url.searchParams.get("selected_application_id"), "trace");
});

Deno.test("the navigation marks Traces on trace pages and Health on the health page", () => {
  assert.equal(currentNavItem("/traces/find")?.label, "Traces");
  assert.equal(currentNavItem("/traces/inspect")?.label, "Traces");
  assert.equal(currentNavItem("/traces/health")?.label, "Health");
  assert.equal(currentNavItem("/traces/health.json")?.label, "Health");
});

Deno.test("trace pages without an index say how to create one", async () => {
  await withUiApp({ adminToken: ADMIN_TOKEN, bare: true }, async (fixture) => {
    for (const path of ["/traces/find", "/traces/inspect?root_trace_id=x"]) {
      const response = await get(fixture, path);
      assert.equal(response.status, 200, path);
      assert.match(await response.text(), /trace obs init/);
    }
  });
});

Deno.test("evidenceSentence() keeps reading and coverage apart and never claims more than was declared", () => {
  const coverage = {
    state: "partial" as const,
    roots: 20,
    declared_roots: 1,
    covered_roots: 1,
    gaps: [],
  };
  assert.equal(
    evidenceSentence({
      read_completeness: "complete",
      instrumentation_coverage: "unknown",
      outcome_verification: "unknown",
    }),
    "All stored events loaded; end-to-end coverage unknown.",
  );
  assert.equal(
    evidenceSentence({
      read_completeness: "partial",
      instrumentation_coverage: "partial",
      outcome_verification: "recorded",
      coverage,
    }, "one page"),
    "Stored events loaded up to the bound (one page); end-to-end coverage partial: 19 of 20 tasks declare no coverage profile.",
  );
  assert.match(
    evidenceSentence({
      read_completeness: "complete",
      instrumentation_coverage: "partial",
      outcome_verification: "unknown",
      coverage: {
        ...coverage,
        roots: 1,
        gaps: [{
          application_id: "a",
          root_trace_id: "r",
          profile: "p",
          problem: "missing_stages",
          missing_stages: ["delivery"],
        }],
      },
    }),
    /required stages not observed \(delivery\)/,
  );
});

Deno.test("a tenant-bound account sees only its application on every trace page and twin", async () => {
  const token = "reader-token-0123456789abcdef";
  await withUiApp({
    seed: seedAll,
    app: {
      accounts: {
        reader: { token, role: "viewer", application_id: "support-app" },
      },
    },
  }, async (fixture) => {
    const as = async (path: string) => {
      const response = await fixture.app.request(
        at(path),
        page({ authorization: `Bearer ${token}` }),
      );
      return { status: response.status, body: await response.json() };
    };
    const find = await as("/traces/find.json");
    assert.equal(find.status, 200);
    assert.equal(find.body.request.filter.application_id, "support-app");
    assert.ok(
      find.body.page.groups.every((g: { application_id: string }) =>
        g.application_id === "support-app"
      ),
    );
    assert.equal(
      (await as("/traces/find.json?application_id=legacy-app")).status,
      403,
    );
    const legacy = await as(
      `/traces/inspect.json?root_trace_id=${LEGACY.root_trace_id}`,
    );
    // Another tenant's root is answered as a root that does not exist.
    const unknown = await as("/traces/inspect.json?root_trace_id=no-such-root");
    assert.equal(legacy.status, 404);
    assert.equal(unknown.status, 404);
    assert.deepEqual(
      legacy.body,
      JSON.parse(
        JSON.stringify(unknown.body).replace(
          "no-such-root",
          LEGACY.root_trace_id,
        ),
      ),
      "another tenant's root leaked",
    );
    // So is another tenant's event: the page and its twin as for no event.
    const theirs = await as(`/traces/events/${LEGACY.root_trace_id}.json`);
    const none = await as("/traces/events/no-such-event.json");
    assert.equal(theirs.status, 404);
    assert.equal(none.status, 404);
    assert.equal(none.body.error.code, "not_found");
    assert.deepEqual(
      theirs.body,
      JSON.parse(
        JSON.stringify(none.body).replace(
          "no-such-event",
          LEGACY.root_trace_id,
        ),
      ),
      "another tenant's event leaked",
    );
    const pages = await Promise.all(
      [LEGACY.root_trace_id, "no-such-event"].map(async (id) => {
        const response = await fixture.app.request(
          at(`/traces/events/${id}`),
          page({ authorization: `Bearer ${token}`, accept: "text/html" }),
        );
        return { status: response.status, html: await response.text() };
      }),
    );
    assert.deepEqual(pages.map((p) => p.status), [404, 404]);
    assert.equal(
      pages[0]!.html.replaceAll(LEGACY.root_trace_id, "ID"),
      pages[1]!.html.replaceAll("no-such-event", "ID"),
      "another tenant's event page differs from a missing one's",
    );
    const ours = await as(`/traces/events/${INCIDENT.selection_event}.json`);
    assert.equal(ours.status, 200);
    assert.equal(ours.body.events.length, 1);
    const selected = await as(
      `/traces/find.json?selected=${LEGACY.root_trace_id}`,
    );
    assert.deepEqual(selected.body.selected.matches, []);
    const events = await as("/traces/events.json?store=all");
    assert.ok(
      events.body.events.every((e: { application_id: string }) =>
        e.application_id === "support-app"
      ),
    );
    assert.equal(
      (await as(
        "/traces/compare.json?baseline=legacy-7&baseline_application_id=legacy-app&candidate=task-42",
      )).status,
      403,
    );
  });
});

Deno.test("an event or target id ending in .json has its own page, linked with a slash; . and .. are refused as event ids", async () => {
  await withUiApp({
    adminToken: ADMIN_TOKEN,
    seed: async (db) => {
      await ingestEvents(db, [{
        application_id: "app-dot",
        root_trace_id: "root-dot",
        event_id: "answer.json",
        agent_id: "bot",
        kind: "retrieval",
        started_at: "2026-11-30T10:00:00Z",
      }]);
      await registerTarget(db, {
        targetId: "staging.json",
        config: stagingConfig(),
        source: "registered",
      });
    },
  }, async (fixture) => {
    const href = eventPageHref({
      event_id: "answer.json",
      application_id: "app-dot",
      root_trace_id: "root-dot",
    });
    assert.match(href, /^\/traces\/events\/answer\.json\/\?/);
    const eventPage = await get(fixture, href);
    assert.equal(eventPage.status, 200);
    const html = await eventPage.text();
    assert.match(html, /answer\.json/);
    assert.match(html, /href="\/traces\/events\/answer\.json\.json\?/);
    const twin = await json(fixture, "/traces/events/answer.json.json");
    assert.equal(twin.status, 200);
    assert.equal(twin.body.events?.[0]?.event_id, "answer.json");

    assert.equal(targetHref("staging.json"), "/targets/staging.json/");
    const targetPage = await get(fixture, targetHref("staging.json"));
    assert.equal(targetPage.status, 200);
    const targetHtml = await targetPage.text();
    assert.match(targetHtml, /staging\.json/);
    // Its run form posts to the id itself, with no slash from the page link.
    assert.match(targetHtml, /action="\/targets\/staging\.json\/run"/);
    assert.equal(
      (await json(fixture, "/targets/staging.json.json")).status,
      200,
    );

    await assert.rejects(
      () =>
        ingestEvents(fixture.db, [{
          application_id: "app-dot",
          root_trace_id: "root-dot",
          event_id: "..",
          agent_id: "bot",
          kind: "retrieval",
          started_at: "2026-11-30T10:00:00Z",
        }]),
      /event_id: must not be "\." or "\.\."/,
    );
  });
});

Deno.test("the event page finds an event whose id also names a root of more than a page of newer events", async () => {
  await withUiApp({
    adminToken: ADMIN_TOKEN,
    // A root's first event often carries the root's id: here it is the
    // oldest of 150 events that all match that id as their root.
    seed: async (db) => {
      await ingestEvents(
        db,
        Array.from({ length: 150 }, (_, i) => ({
          application_id: "app-busy",
          agent_id: "bot",
          root_trace_id: "root-busy",
          event_id: i === 0 ? "root-busy" : `busy-${i}`,
          kind: "retrieval",
          started_at: new Date(Date.UTC(2026, 10, 30, 10, 0, i)).toISOString(),
        })),
      );
    },
  }, async (fixture) => {
    const twin = await json(fixture, "/traces/events/root-busy.json");
    assert.equal(twin.status, 200);
    assert.deepEqual(
      twin.body.events.map((e: { event_id: string }) => e.event_id),
      ["root-busy"],
    );
    assert.equal(twin.body.read_completeness, "complete");
    const narrowed = await json(
      fixture,
      "/traces/events/root-busy.json?root_trace_id=root-busy&agent_id=bot",
    );
    assert.equal(narrowed.body.events.length, 1);
  });
});

Deno.test("the footer names where the data lives to unscoped operators and administrators only, and leaves key hints to the script", async () => {
  const accounts = {
    "viewer-all": { token: "viewer-all-token-0123456789", role: "viewer" },
    "reader-app": {
      token: "reader-app-token-0123456789",
      role: "viewer",
      application_id: "support-app",
    },
    "ops-all": { token: "ops-all-token-0123456789ab", role: "operator" },
    "ops-app": {
      token: "ops-app-token-0123456789ab",
      role: "operator",
      application_id: "support-app",
    },
    "admin-app": {
      token: "admin-app-token-0123456789",
      role: "admin",
      application_id: "support-app",
    },
  } as const;
  await withUiApp({
    adminToken: ADMIN_TOKEN,
    seed: seedAll,
    app: { accounts },
  }, async (fixture) => {
    const footer = async (token: string) => {
      const response = await fixture.app.request(
        at("/traces/find"),
        page({ authorization: `Bearer ${token}` }),
      );
      assert.equal(response.status, 200);
      const html = await response.text();
      return html.slice(html.indexOf('<footer class="site-footer">'));
    };
    const sees = {
      [ADMIN_TOKEN]: true,
      [accounts["ops-all"].token]: true,
      [accounts["viewer-all"].token]: false,
      [accounts["reader-app"].token]: false,
      [accounts["ops-app"].token]: false,
      [accounts["admin-app"].token]: false,
    };
    for (const [token, expected] of Object.entries(sees)) {
      const html = await footer(token);
      assert.equal(/Copy data location/.test(html), expected, token);
      assert.equal(/trace\.db/.test(html), expected, token);
      assert.match(html, /This page as JSON: <a href="\/traces\/find\.json">/);
      // The keys work with the script, where the page has what they act on.
      assert.match(
        html,
        /<span class="shortcuts" data-key-hints="" hidden="">Keys: <span data-key-hint="filter" hidden="">/,
      );
    }
  });
});

Deno.test("a comparison counts one selection event and its candidates in the singular and plural they need", async () => {
  await withApp(async (fixture) => {
    const html = await (await get(
      fixture,
      "/traces/compare?baseline=task-42&candidate=task-42",
    )).text();
    assert.match(
      html,
      /1 selection event with 64 candidates in the baseline, 1 selection event with 64 candidates in the candidate/,
    );
    assert.doesNotMatch(html, /\b1 selection events\b|\b1 events against\b/);
  });
});

/** A page as a browser asks for it, as `bearer` (default the admin). */
async function browse(
  fixture: Fixture,
  path: string,
  bearer = ADMIN_TOKEN,
): Promise<Response> {
  return await fixture.app.request(
    at(path),
    page({ authorization: `Bearer ${bearer}`, accept: "text/html" }),
  );
}

/** The token of a viewer bound to support-app, beside the admin. */
const READER_TOKEN = "reader-token-0123456789abcdef";

/** The trace pages over `seed` with the admin and a viewer of {@link READER_TOKEN}. */
function withReaderApp(
  seed: (db: TraceDb) => Promise<void>,
  fn: (fixture: Fixture) => Promise<void>,
): Promise<void> {
  return withUiApp({
    adminToken: ADMIN_TOKEN,
    seed,
    app: {
      accounts: {
        reader: {
          token: READER_TOKEN,
          role: "viewer",
          application_id: "support-app",
        },
      },
    },
  }, fn);
}

/** The opening tag of the element with `id` in `html`. */
function tagOf(html: string, id: string): string {
  const tag = html.match(new RegExp(`<[a-z]+ [^>]*id="${id}"[^>]*>`))?.[0];
  assert.ok(tag, `no element with id ${id}`);
  return tag;
}

Deno.test("a refused finder search comes back as the finder: the notice names the field, the form keeps what was typed", async () => {
  await withApp(async (fixture) => {
    const path =
      `/traces/find?thread_id=${INCIDENT.thread_id}&start_time=yesterday+10%3A00&kind=selection`;
    const response = await browse(fixture, path);
    assert.equal(response.status, 400);
    assert.match(response.headers.get("content-type") ?? "", /text\/html/);
    const html = await response.text();
    // The page itself, with its navigation, not the bare error page.
    assert.match(html, /<title>Find incidents · Trace<\/title>/);
    assert.match(html, /<nav class="site-nav" aria-label="Main">/);
    assert.doesNotMatch(html, /Go to the start page|<h1>Bad request/);
    // The notice says what was not done, names the field and links to it.
    const notice = html.slice(
      html.indexOf('<div class="notice notice--error"'),
      html.indexOf("</div>", html.indexOf('id="finder-error"')),
    );
    assert.match(tagOf(html, "finder-error"), /role="alert"/);
    assert.match(
      notice,
      /Nothing was searched: check <a href="#f-start_time">From \(inclusive\)<\/a>, then search again\./,
    );
    // Both forms the field takes, its note's zoneless UTC one first.
    assert.match(
      notice,
      /start_time: must be a date and time in UTC such as 2026-11-29 10:00, or an ISO 8601 timestamp with a zone such as 2026-11-29T10:00:00Z/,
    );
    // The field is marked and described by the notice; the others are not.
    const from = tagOf(html, "f-start_time");
    assert.match(from, /value="yesterday 10:00"/);
    assert.match(from, /aria-invalid="true"/);
    assert.match(from, /aria-describedby="finder-error f-start_time-note"/);
    assert.doesNotMatch(tagOf(html, "f-thread_id"), /aria-invalid/);
    // The form is there with every value as typed, its filters open.
    assert.match(html, /<form class="finder-form" method="get"/);
    assert.match(html, /<details class="finder-form__filters" open/);
    assert.match(
      tagOf(html, "f-thread_id"),
      new RegExp(`value="${INCIDENT.thread_id}"`),
    );
    assert.match(tagOf(html, "f-kind"), /value="selection"/);
    // No results are claimed for a search that did not run.
    assert.doesNotMatch(html, /id="results"|id="overview"/);
  });
});

Deno.test("a refused finder search refills the form escaped and marks each field a refusal names", async () => {
  await withApp(async (fixture) => {
    const typed = `"><script>alert(1)</script>`;
    const escaped = await browse(
      fixture,
      `/traces/find?end_time=${encodeURIComponent(typed)}`,
    );
    assert.equal(escaped.status, 400);
    const html = await escaped.text();
    assert.doesNotMatch(html, /<script>alert/);
    assert.match(
      tagOf(html, "f-end_time"),
      /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/,
    );
    assert.match(tagOf(html, "f-end_time"), /aria-invalid="true"/);
    // A time order names both times.
    const order = await browse(
      fixture,
      "/traces/find?start_time=2026-11-29T11:00:00Z&end_time=2026-11-29T10:00:00Z",
    );
    assert.equal(order.status, 400);
    const both = await order.text();
    assert.match(
      both,
      /check <a href="#f-start_time">From \(inclusive\)<\/a> and <a href="#f-end_time">Until \(exclusive\)<\/a>/,
    );
    assert.match(tagOf(both, "f-end_time"), /aria-invalid="true"/);
    // A parameter the form does not show names no field, and is not kept.
    const unknown = await browse(fixture, "/traces/find?thread=t-1");
    assert.equal(unknown.status, 400);
    const text = await unknown.text();
    assert.match(
      text,
      /Nothing was searched for the reason below; correct it, then search again\./,
    );
    assert.match(text, /unknown parameter &quot;thread&quot;; did you mean/);
    assert.doesNotMatch(text, /aria-invalid/);
  });
});

Deno.test("the finder shows a tenant outside the account's scope, a cursor of other filters and a refused status or store on its own page", async () => {
  const token = READER_TOKEN;
  await withReaderApp(seedAll, async (fixture) => {
    const as = (path: string) => browse(fixture, path, token);
    // Another application typed by a tenant-bound account: 403, the form as typed.
    const other = await as(
      `/traces/find?application_id=legacy-app&thread_id=${INCIDENT.thread_id}`,
    );
    assert.equal(other.status, 403);
    const otherHtml = await other.text();
    assert.match(otherHtml, /<title>Find incidents · Trace<\/title>/);
    assert.doesNotMatch(otherHtml, /<h1>Not allowed/);
    assert.match(
      otherHtml,
      /Nothing was searched: check <a href="#f-application_id">Application<\/a>, then search again\./,
    );
    assert.match(otherHtml, /outside this account&#39;s scope/);
    const app = tagOf(otherHtml, "f-application_id");
    assert.match(app, /value="legacy-app"/);
    assert.match(app, /aria-invalid="true"/);
    assert.match(
      tagOf(otherHtml, "f-thread_id"),
      new RegExp(`value="${INCIDENT.thread_id}"`),
    );
    // A selection's application outside the scope: no typed field is blamed.
    const selection = await as(
      "/traces/find?selected=e-1&selected_application_id=legacy-app",
    );
    assert.equal(selection.status, 403);
    assert.doesNotMatch(await selection.text(), /aria-invalid/);
    // The twin keeps its JSON error.
    const twin = await fixture.app.request(
      at("/traces/find.json?application_id=legacy-app"),
      page({ authorization: `Bearer ${token}` }),
    );
    assert.equal(twin.status, 403);
    assert.equal((await twin.json()).error.code, "forbidden");

    // A next page's cursor under other filters: the form, and the first page.
    const first = await json(fixture, "/traces/find.json");
    const cursor = first.body.page.next_cursor as string;
    const moved = await browse(
      fixture,
      `/traces/find?kind=selection&cursor=${cursor}`,
    );
    assert.equal(moved.status, 400);
    const movedHtml = await moved.text();
    assert.match(movedHtml, /<title>Find incidents · Trace<\/title>/);
    assert.match(
      movedHtml,
      /Nothing was searched for the reason below; correct it, then search again\./,
    );
    assert.match(movedHtml, /it was issued for different filters/);
    assert.match(tagOf(movedHtml, "f-kind"), /value="selection"/);
    assert.match(movedHtml, /<a href="\/traces\/find\?kind=selection">/);
    assert.doesNotMatch(movedHtml, /name="cursor"/, "the form starts over");

    // A refused status or store is shown as typed, never as "any".
    const select = (html: string, id: string) =>
      html.match(new RegExp(`<select [^>]*id="${id}"[\\s\\S]*?</select>`))
        ?.[0] ??
        "";
    const bad = await (await browse(
      fixture,
      "/traces/find?status=okay&store=vectors",
    )).text();
    assert.match(
      select(bad, "f-status"),
      /<option value="okay" selected>okay</,
    );
    assert.match(select(bad, "f-status"), /aria-invalid="true"/);
    assert.match(
      select(bad, "f-store"),
      /<option value="vectors" selected>vectors</,
    );
    assert.doesNotMatch(select(bad, "f-status"), /<option value="" selected/);
    const store = await (await browse(
      fixture,
      "/traces/find?status=ok&store=vectors",
    )).text();
    assert.match(select(store, "f-store"), /aria-invalid="true"/);
    assert.match(select(store, "f-status"), /<option value="ok" selected>/);
    // A list of statuses is a search like any other, and stays as sent.
    const list = await browse(fixture, "/traces/find?status=ok,error");
    assert.equal(list.status, 200);
    assert.match(
      select(await list.text(), "f-status"),
      /<option value="ok,error" selected>ok,error</,
    );
  });
});

/** The query the finder's search form sends as it stands: its search box and hidden fields. */
function finderFormQuery(html: string): URLSearchParams {
  const form = html.match(/<form class="finder-form"[\s\S]*?<\/form>/)?.[0];
  assert.ok(form, "the finder's form is on the page");
  const sent = new URLSearchParams();
  const q = form.match(/<input type="search" id="f-q" name="q" value="([^"]*)"/)
    ?.[1];
  if (q) sent.set("q", q);
  for (
    const [, name, value] of form.matchAll(
      /<input type="hidden" name="([^"]+)" value="([^"]*)">/g,
    )
  ) {
    sent.append(name!, value!);
  }
  return sent;
}

Deno.test("a refused finder search leaves out of its form the hidden value it was refused for, so sending it again works", async () => {
  const token = READER_TOKEN;
  await withReaderApp(seedAll, async (fixture) => {
    const as = (bearer: string, path: string) => browse(fixture, path, bearer);
    // A selection in another application: 403, and the form drops its application.
    const refused = await as(
      token,
      "/traces/find?q=e-1&application_id=support-app&selected=e-1&selected_application_id=legacy-app",
    );
    assert.equal(refused.status, 403);
    const html = await refused.text();
    assert.match(html, /outside this account&#39;s scope/);
    // Neither a field nor a link of the page sends it again (the twin's link
    // is this request's, as sent).
    const main = html.slice(html.indexOf("<main"), html.indexOf("</main>"));
    assert.doesNotMatch(main, /name="selected_application_id"/);
    assert.doesNotMatch(main, /selected_application_id=legacy-app/);
    assert.match(
      html,
      /The form below leaves out selected_application_id, which it has no field to correct: search again without it\./,
    );
    // The application typed is the account's own: not blamed.
    assert.doesNotMatch(tagOf(html, "f-application_id"), /aria-invalid/);
    const again = finderFormQuery(html);
    assert.equal(again.get("selected"), "e-1");
    assert.equal((await as(token, `/traces/find?${again}`)).status, 200);
    // A hidden filter the form does not show, refused: left out too.
    const hidden = await as(
      ADMIN_TOKEN,
      "/traces/find?kind=selection&success=maybe",
    );
    assert.equal(hidden.status, 400);
    const hiddenHtml = await hidden.text();
    assert.doesNotMatch(hiddenHtml, /name="success"/);
    const resent = finderFormQuery(hiddenHtml);
    resent.set("kind", "selection");
    assert.equal((await as(ADMIN_TOKEN, `/traces/find?${resent}`)).status, 200);
  });
});

Deno.test("the finder's twin and scripts keep the JSON refusal of a bad filter", async () => {
  await withApp(async (fixture) => {
    const expected = {
      error: {
        code: "invalid_request",
        message:
          "Invalid trace query: start_time: must be an ISO 8601 timestamp with a zone, e.g. 2026-09-01T12:00:00Z",
      },
    };
    const twin = await browse(
      fixture,
      "/traces/find.json?start_time=yesterday",
    );
    assert.equal(twin.status, 400);
    assert.deepEqual(await twin.json(), expected);
    // The page path without a browser's Accept answers as it did.
    const script = await json(fixture, "/traces/find?start_time=yesterday");
    assert.equal(script.status, 400);
    assert.deepEqual(script.body, expected);
    // Nor is a zoneless time read for a script.
    const zoneless = await json(
      fixture,
      "/traces/find.json?start_time=2026-11-29+10%3A00",
    );
    assert.equal(zoneless.status, 400);
  });
});

Deno.test("the finder reads a time typed without a zone as UTC, and refuses one that is no time", async () => {
  await withApp(async (fixture) => {
    const typed = await browse(
      fixture,
      "/traces/find?q=task-42&start_time=2026-11-29+10%3A00&end_time=2026-11-29T11%3A30%3A15",
    );
    assert.equal(typed.status, 302);
    const location = new URL(typed.headers.get("location")!, "http://x");
    assert.equal(location.pathname, "/traces/find");
    assert.equal(location.searchParams.get("q"), "task-42");
    assert.equal(
      location.searchParams.get("start_time"),
      "2026-11-29T10:00:00Z",
    );
    assert.equal(location.searchParams.get("end_time"), "2026-11-29T11:30:15Z");
    const followed = await browse(fixture, location.pathname + location.search);
    assert.equal(followed.status, 200);
    assert.match(
      tagOf(await followed.text(), "f-start_time"),
      /value="2026-11-29T10:00:00Z"/,
    );
    // February 30 is no time: it stays as typed, for the page to refuse.
    const impossible = await browse(
      fixture,
      "/traces/find?start_time=2026-02-30+10%3A00",
    );
    assert.equal(impossible.status, 400);
    assert.match(
      tagOf(await impossible.text(), "f-start_time"),
      /value="2026-02-30 10:00"/,
    );
  });
});

Deno.test("a refused comparison of roots comes back as its page: the notice names the field to correct, the form keeps what was sent", async () => {
  const token = READER_TOKEN;
  await withReaderApp(async (db) => {
    await seedAll(db);
    // The incident's root id reused by another application.
    await ingestEvents(db, [{
      application_id: "legacy-app",
      root_trace_id: "task-42",
      event_id: "other-task-42",
      agent_id: "bot",
      kind: "retrieval",
      started_at: "2026-11-30T10:00:00Z",
    }]);
  }, async (fixture) => {
    const as = (bearer: string, path: string) => browse(fixture, path, bearer);
    // A root id two applications share: 409, each side's application marked.
    const shared = await as(
      ADMIN_TOKEN,
      "/traces/compare?baseline=task-42&candidate=busy-3-r0&candidate_application_id=support-app",
    );
    assert.equal(shared.status, 409);
    const html = await shared.text();
    assert.match(html, /<title>Compare roots · Trace<\/title>/);
    assert.doesNotMatch(html, /<h1>Conflict/);
    assert.match(
      html,
      /Nothing was compared: check <a href="#c-baseline-app">Baseline application<\/a>, then compare again\./,
    );
    assert.match(html, /Root &quot;task-42&quot; exists in applications/);
    assert.match(tagOf(html, "c-baseline-app"), /aria-invalid="true"/);
    assert.doesNotMatch(tagOf(html, "c-candidate-app"), /aria-invalid/);
    assert.match(tagOf(html, "c-baseline"), /value="task-42"/);
    assert.match(tagOf(html, "c-candidate-app"), /value="support-app"/);
    // A side's application outside a tenant-bound account's scope: 403, that side.
    const outside = await as(
      token,
      "/traces/compare?baseline=legacy-7&baseline_application_id=legacy-app&candidate=task-42",
    );
    assert.equal(outside.status, 403);
    const outsideHtml = await outside.text();
    assert.match(outsideHtml, /outside this account&#39;s scope/);
    assert.match(tagOf(outsideHtml, "c-baseline-app"), /aria-invalid="true"/);
    assert.match(tagOf(outsideHtml, "c-baseline-app"), /value="legacy-app"/);
    // A parameter that does not apply: no field named; the form leaves it out.
    const other = await as(
      ADMIN_TOKEN,
      "/traces/compare?baseline=task-42&candidate=task-42&kind=selection",
    );
    assert.equal(other.status, 400);
    const otherHtml = await other.text();
    assert.match(
      otherHtml,
      /Nothing was compared for the reason below; correct it, then compare again\./,
    );
    assert.match(otherHtml, /kind does not apply to a comparison/);
    assert.doesNotMatch(otherHtml, /aria-invalid|name="kind"/);
    // A root id no event could carry comes back escaped, and named.
    const markup = await as(
      ADMIN_TOKEN,
      `/traces/compare?baseline=${encodeURIComponent('"><i>x\u202e')}`,
    );
    assert.equal(markup.status, 400);
    const markupHtml = await markup.text();
    assert.doesNotMatch(markupHtml, /<i>x/);
    assert.match(tagOf(markupHtml, "c-baseline"), /aria-invalid="true"/);
    // The twin keeps the JSON error.
    const twin = await fixture.app.request(
      at("/traces/compare.json?baseline=task-42&candidate=task-42"),
      page({ authorization: `Bearer ${ADMIN_TOKEN}` }),
    );
    assert.equal(twin.status, 409);
    assert.equal((await twin.json()).error.code, "conflict");
  });
});

Deno.test("inspection shows a refused query on its own page, with the way on", async (t) => {
  await withApp(async (fixture) => {
    const base = "application_id=support-app&root_trace_id=task-42";
    const cases = [
      {
        name: "a status it cannot read",
        query: `${base}&status=nope`,
        status: 400,
        said: /Check status, then read again\./,
        link: `/traces/inspect?${base.replace("&", "&amp;")}`,
      },
      {
        name: "a lane it cannot read",
        query: `${base}&lane=nope&kind=retrieval`,
        status: 400,
        said: /lane: must be one of/,
        link: `/traces/inspect?${
          base.replace("&", "&amp;")
        }&amp;kind=retrieval`,
      },
      {
        name: "no root id",
        query: "application_id=support-app&status=error",
        status: 400,
        said: /Add root_trace_id below, then read again\./,
        link: null,
      },
    ];
    for (const { name, query, status, said, link } of cases) {
      await t.step(name, async () => {
        const response = await browse(fixture, `/traces/inspect?${query}`);
        assert.equal(response.status, status);
        const html = await response.text();
        assert.match(html, /<h1>(Inspect a root|Root task-42)<\/h1>/);
        assert.match(html, /role="alert"/);
        assert.match(html, said);
        assert.doesNotMatch(html, /Page not found|class="error-page"/);
        if (link) {
          assert.ok(
            html.includes(`href="${link}">Open this view without`),
            html.slice(html.indexOf("<main")),
          );
        } else {
          assert.match(html, /name="root_trace_id"[^>]*required/);
          assert.match(
            html,
            /<input type="hidden" name="status" value="error"\/?>/,
          );
        }
        // The twin keeps the JSON error.
        const twin = await json(
          fixture,
          `/traces/inspect.json?${query}`,
        );
        assert.equal(twin.status, status);
        assert.equal(twin.body.error.code, "invalid_request");
      });
    }
    await t.step("a root id two applications use", async () => {
      await shareIncidentRoot(fixture.db);
      const response = await browse(
        fixture,
        "/traces/inspect?root_trace_id=task-42&kind=retrieval",
      );
      assert.equal(response.status, 409);
      const html = await response.text();
      assert.match(html, /Add application_id below, then read again\./);
      assert.match(html, /name="application_id"[^>]*required/);
      assert.match(
        html,
        /<input type="hidden" name="root_trace_id" value="task-42"\/?>/,
      );
    });
    await t.step(
      "a root nothing in scope holds answers 404, its twin too",
      async () => {
        const response = await browse(
          fixture,
          "/traces/inspect?root_trace_id=no-such-root",
        );
        assert.equal(response.status, 404);
        assert.match(await response.text(), /Nothing to inspect/);
        const twin = await json(
          fixture,
          "/traces/inspect.json?root_trace_id=no-such-root",
        );
        assert.equal(twin.status, 404);
        assert.equal(twin.body.error.code, "not_found");
        assert.match(
          twin.body.error.message,
          /^No event of root "no-such-root" is in your scope under this selection; check /,
        );
        // Filters that leave nothing of a root that exists: the same answer.
        const filtered = await json(
          fixture,
          "/traces/inspect.json?root_trace_id=task-42&application_id=support-app&agent_id=nobody",
        );
        assert.equal(filtered.status, 404);
        assert.equal(filtered.body.error.code, "not_found");
      },
    );
  });
});

/** A zero-width space: ingest takes it in an id, where it hides a difference. */
const ZW = "\u200B";
/** A right-to-left override, which reverses what follows it. */
const RLO = "\u202E";
/** Stands in for {@link RLO} at ingest, which refuses bidi characters in ids; the seed swaps it in. */
const LATER_RLO = "\u2060";

/**
 * The ids a browser addresses (they travel in links and forms) hold a
 * zero-width space; the other fields hold a right-to-left override, as an
 * index written before ids refused one may: kind, stage, profile, tool,
 * parent, refs, attribute values, outcome code, the preview.
 */
const SPOOF = {
  app: `app${ZW}one`,
  other_app: `app${ZW}two`,
  agent: `agent${ZW}x`,
  memory: `memory${ZW}x`,
  user: `user${ZW}x`,
  thread: `thread${ZW}x`,
  turn: `turn${ZW}x`,
  run: `run${ZW}x`,
  root: `root${ZW}one`,
  root2: `root${ZW}two`,
  intent: `evt${ZW}intent`,
  deliver: `evt${ZW}deliver`,
} as const;

/** Every trace page's evidence, each id and field spoofed as {@link SPOOF} says. */
async function seedSpoofed(db: TraceDb): Promise<void> {
  const base = {
    application_id: SPOOF.app,
    agent_id: SPOOF.agent,
    user_id: SPOOF.user,
    thread_id: SPOOF.thread,
    turn_id: SPOOF.turn,
    run_id: SPOOF.run,
    root_trace_id: SPOOF.root,
  };
  const ref = (name: string) => `${name}${LATER_RLO}x${ZW}y`;
  const second = (s: number) =>
    new Date(Date.UTC(2026, 10, 30, 9, 0, s)).toISOString();
  await ingestEvents(db, [
    {
      ...base,
      event_id: SPOOF.intent,
      kind: "intent",
      coverage_profile: "spoof_profile",
      started_at: second(0),
      resources: [{ type: "document", id: ref("doc"), role: "expected" }],
      attributes: {
        "intent.name": `refund${RLO}fdp.exe`,
        "intent.expected_artifact_types": `reply${RLO}`,
        "app.note": `note${RLO}x${ZW}y`,
        "instrumentation.name": `sdk${RLO}`,
      },
    },
    {
      ...base,
      event_id: `evt${ZW}delete`,
      parent_event_id: SPOOF.intent,
      kind: "memory_delete",
      started_at: second(1),
      resources: [{ type: "memory", id: ref("mem"), role: "deleted" }],
    },
    {
      ...base,
      event_id: `evt${ZW}select`,
      parent_event_id: SPOOF.intent,
      kind: "selection",
      started_at: second(2),
      selection: {
        strategy: "mmr",
        candidates: [
          {
            ref: { type: "document", id: ref("kept") },
            rank: 0,
            selected: true,
            reason: "mmr_rank",
          },
          {
            ref: { type: "document", id: ref("dropped") },
            rank: 1,
            selected: false,
            reason: "below_threshold",
          },
        ],
      },
    },
    {
      ...base,
      event_id: `evt${ZW}llm`,
      // A parent the index does not hold: the waterfall names it.
      parent_event_id: ref("gone"),
      kind: "llm_call",
      status: "error",
      tool: ref("tool"),
      started_at: second(3),
      ended_at: second(4),
      resources: [{ type: "memory", id: ref("mem"), role: "supplied" }],
      attributes: { "gen_ai.request.model": `model${RLO}` },
      outcome: { verified: false, status: "failure", code: "refund_issued" },
    },
    {
      ...base,
      event_id: SPOOF.deliver,
      parent_event_id: SPOOF.intent,
      kind: "delivery",
      started_at: second(5),
      resources: [
        { type: "memory", id: ref("mem"), role: "output_bound" },
        {
          type: "document",
          id: ref("doc"),
          version: ref("v"),
          role: "output_bound",
        },
      ],
      outcome: {
        verified: true,
        status: "success",
        code: "refund_issued",
        artifact: { type: "reply", id: ref("reply") },
      },
      preview: `hello${RLO}dlrow${ZW}`,
    },
    {
      ...base,
      agent_id: null,
      memory_id: SPOOF.memory,
      // A second turn: inspection offers each as a narrower replay.
      turn_id: `turn${ZW}y`,
      event_id: `evt${ZW}memory`,
      kind: "memory_write",
      started_at: second(6),
    },
    {
      ...base,
      root_trace_id: SPOOF.root2,
      event_id: `evt${ZW}other`,
      kind: "retrieval",
      started_at: second(7),
      resources: [{ type: "document", id: ref("doc2"), role: "retrieved" }],
    },
    // A deletion run's own root: its pages link the run.
    {
      application_id: RUN_TRACE_APPLICATION,
      agent_id: "trace-runner",
      root_trace_id: SPOOF.run,
      run_id: SPOOF.run,
      event_id: runRootEventId(SPOOF.run),
      kind: "run",
      started_at: second(9),
    },
    // The same event id in another application: a choice to make.
    {
      ...base,
      application_id: SPOOF.other_app,
      event_id: SPOOF.intent,
      kind: "intent",
      started_at: second(8),
    },
  ]);
  for (
    const [table, columns] of [
      ["obs_events", ["parent_event_id", "tool", "meta"]],
      ["obs_resources", ["id", "version"]],
    ] as const
  ) {
    const sets = columns.map((c) => `${c} = replace(${c}, ?, ?)`).join(", ");
    await db.client.execute({
      sql: `UPDATE ${table} SET ${sets}`,
      args: columns.flatMap(() => [LATER_RLO, RLO]),
    });
  }
  // Tokens and names the model keeps to a-z now: what an older index may
  // still hold.
  await db.client.execute({
    sql: "UPDATE obs_events SET store = store || ? WHERE kind = 'memory_write'",
    args: [RLO],
  });
  await db.client.execute({
    sql: `UPDATE obs_events SET kind = kind || ?, stage = stage || ?,
      coverage_profile = coverage_profile || ? WHERE kind = 'llm_call' OR kind = 'intent'`,
    args: [RLO, RLO, RLO],
  });
  await registerCoverageProfile(db, "spoof_profile", {
    application_id: SPOOF.app,
    required: ["intent", "llm_call"],
    optional: ["delivery"],
  });
  await db.client.execute({
    sql: `UPDATE obs_coverage_profiles SET name = name || ?,
      required = replace(required, '"llm_call"', ?)`,
    args: [RLO, `"llm_call${RLO}"`],
  });
  // Tokens in the stored metadata: a strategy, an outcome code, a reason, a role.
  for (
    const text of [
      '"mmr"',
      '"refund_issued"',
      '"below_threshold"',
      '"role":"expected"',
    ]
  ) {
    await db.client.execute({
      sql: "UPDATE obs_events SET meta = replace(meta, ?, ?)",
      args: [text, `${text.slice(0, -1)}${RLO}"`],
    });
  }
  // A tenant's parity check, which health lists by application.
  await parity(db, { applicationId: SPOOF.app, record: true });
}

/** `html` without what carries an id as stored: link targets, form values, copy payloads. */
function withoutStoredValues(html: string): string {
  return html.replace(/ (?:href|value|data-copy)="[^"]*"/g, "");
}

/** Fails naming the page and the text around the first raw U+202E or U+200B it shows. */
function assertNothingRaw(html: string, page: string): void {
  const shown = withoutStoredValues(html);
  const at = shown.search(/[\u200B\u202E]/);
  assert.equal(
    at,
    -1,
    `${page}: …${shown.slice(Math.max(0, at - 300), at + 60)}…`,
  );
}

Deno.test("every trace page shows the bidi and zero-width characters of ids and producer fields as escapes, keeping them only in links, form values and copy payloads", async () => {
  await withUiApp({
    adminToken: ADMIN_TOKEN,
    seed: seedSpoofed,
    app: {
      identityResolver: () => ({
        user_id: SPOOF.user,
        application_id: SPOOF.app,
      }),
      resourceAuthorizer: () => true,
    },
  }, async (fixture) => {
    const q = (params: Record<string, string>) => new URLSearchParams(params);
    const inApp = { application_id: SPOOF.app };
    const pages: [string, number][] = [
      [`/traces/find`, 200],
      [`/traces/find?${q({ q: SPOOF.thread })}`, 200],
      [`/traces/find?${q({ q: SPOOF.root })}`, 200],
      // The selected id names events of two applications: a choice.
      [`/traces/find?${q({ selected: SPOOF.intent })}`, 200],
      [`/traces/find?${q({ ...inApp, selected: SPOOF.deliver })}`, 200],
      [`/traces/find?${q({ selected: `no${ZW}such` })}`, 200],
      [
        `/traces/inspect?${
          q({ ...inApp, root_trace_id: SPOOF.root, selected: SPOOF.deliver })
        }`,
        200,
      ],
      [
        `/traces/inspect?${
          q({ ...inApp, root_trace_id: SPOOF.root, selected: `no${ZW}such` })
        }`,
        200,
      ],
      [
        `/traces/inspect?${
          q({
            ...inApp,
            root_trace_id: SPOOF.root,
            agent_id: SPOOF.agent,
            turn_id: SPOOF.turn,
            selected: `evt${ZW}llm`,
          })
        }`,
        200,
      ],
      [
        `/traces/inspect?${
          q({ ...inApp, root_trace_id: SPOOF.root, kind: `llm_call${RLO}` })
        }`,
        400,
      ],
      [
        `/traces/inspect?${
          q({ root_trace_id: `no${ZW}such`, selected: `evt${ZW}gone` })
        }`,
        404,
      ],
      [`/traces/events/${encodeURIComponent(SPOOF.deliver)}`, 200],
      [`/traces/events/${encodeURIComponent(SPOOF.intent)}`, 200],
      [`/traces/events/${encodeURIComponent(`evt${ZW}memory`)}`, 200],
      [`/traces/events/${encodeURIComponent(`evt${ZW}select`)}`, 200],
      [`/traces/events/${encodeURIComponent(`no${ZW}such`)}`, 404],
      [
        `/traces/compare?${
          q({
            baseline: SPOOF.root,
            baseline_application_id: SPOOF.app,
            candidate: SPOOF.root2,
            candidate_application_id: SPOOF.app,
          })
        }`,
        200,
      ],
      [
        `/traces/compare?${
          q({ ...inApp, baseline: SPOOF.root, candidate: `no${ZW}such` })
        }`,
        200,
      ],
      // The root id is in two applications: refused, naming both.
      [
        `/traces/compare?${
          q({ baseline: SPOOF.root, candidate: SPOOF.root2 })
        }`,
        409,
      ],
      [`/traces/inspect?${q({ root_trace_id: SPOOF.root })}`, 409],
      [
        `/traces/inspect?${
          q({ application_id: RUN_TRACE_APPLICATION, root_trace_id: SPOOF.run })
        }`,
        200,
      ],
      [`/traces/events/${encodeURIComponent(runRootEventId(SPOOF.run))}`, 200],
      [`/traces/health`, 200],
    ];
    for (const [path, status] of pages) {
      const response = await browse(fixture, path);
      const html = await response.text();
      assert.equal(response.status, status, `${path}: ${html.slice(0, 300)}`);
      assertNothingRaw(html, path);
      const title = /<title>([^<]*)<\/title>/.exec(html)?.[1] ?? "";
      assert.doesNotMatch(title, /[\u200B\u202E]/, path);
    }
    // Titles, copy labels and escapes read the id as the body does.
    const event = await (await browse(
      fixture,
      `/traces/events/${encodeURIComponent(SPOOF.deliver)}`,
    )).text();
    assert.match(
      /<title>([^<]*)<\/title>/.exec(event)?.[1] ?? "",
      /evt\\u\{200b\}deliver/,
    );
    assert.match(event, /aria-label="Copy run id run\\u\{200b\}x"/);
    assert.match(event, /data-copy="run\u200Bx"/, "copies the id as stored");
    assert.match(event, /<span class="esc"[^>]*>\\u\{202e\}<\/span>/);

    const form = (fields: Record<string, string>): RequestInit =>
      page({
        authorization: `Bearer ${ADMIN_TOKEN}`,
        accept: "text/html",
        origin: "http://127.0.0.1:8788",
        "content-type": "application/x-www-form-urlencoded",
      }, { method: "POST", body: new URLSearchParams(fields).toString() });
    const target = {
      agent_id: SPOOF.agent,
      root_trace_id: SPOOF.root,
      application_id: SPOOF.app,
    };
    const posts: [string, RequestInit, number][] = [
      [
        "/traces/reveal",
        form({
          ...target,
          event_id: SPOOF.deliver,
          reason: "SUP-1 spoofed ids",
        }),
        200,
      ],
      ["/traces/replays", form({ ...target, turn_id: SPOOF.turn }), 201],
      ["/traces/account/resolve", form({ email: "ada@example.com" }), 200],
    ];
    for (const [path, init, status] of posts) {
      const response = await fixture.app.request(at(path), init);
      const html = await response.text();
      assert.equal(response.status, status, `${path}: ${html.slice(0, 600)}`);
      assertNothingRaw(html, path);
    }
  });
});

Deno.test("the tables' filters keep their text in a parameter of their own, which a reload takes and no search reads", async () => {
  await withApp(async (fixture) => {
    const base =
      `/traces/inspect?application_id=support-app&root_trace_id=task-42&agent_id=support-bot&selected=${INCIDENT.selection_event}`;
    const inspect = await (await get(fixture, base)).text();
    assert.match(inspect, /name="candidates" data-filter="candidates"/);
    const filtered = await get(fixture, `${base}&candidates=doc-1`);
    assert.equal(filtered.status, 200);
    assert.equal(
      (await filtered.text()).match(/class="wf-row/g)!.length,
      inspect.match(/class="wf-row/g)!.length,
      "the timeline is not narrowed by the table's filter",
    );
    const finder = await (await get(fixture, "/traces/find")).text();
    assert.match(finder, /name="groups" data-filter="overview-table"/);
    const reloaded = await json(fixture, "/traces/find.json?groups=support");
    assert.equal(reloaded.status, 200);
    assert.equal(
      (reloaded.body as { request: { q: string | null } }).request.q,
      null,
      "no exact-id search",
    );
  });
});
