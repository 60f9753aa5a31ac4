/**
 * The trace pages joined together, in memory: the producer fields of the
 * finder's twin, inspection's controls and replay selection, the way from a
 * deletion run's root to its run page, health counts leading to the finder,
 * explained empty states, and pages that are no dead end.
 */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import { EMAIL_PATTERN } from "../lib/auth/mod.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import type { EventInput, TraceEvent } from "../lib/obs/mod.ts";
import { replayChoice } from "../routes/pages/traces_inspect.tsx";
import {
  mappedFields,
  sharedValue,
  tokensText,
} from "../routes/ui/event_fields.ts";
import { runOfEvent, runOfRoot } from "../routes/ui/links.ts";
import {
  eventPageHref,
  inspectHref,
  parseInspectParams,
} from "../routes/ui/trace_params.ts";
import { ADMIN_TOKEN, at, page, withUiApp } from "./browser/_server.ts";
import { ask, jsonOf, signInAs, withHost } from "./operator_support.ts";
import { EXAMPLE_ACCOUNTS } from "../fixtures/host/host.ts";

type Fixture = Parameters<Parameters<typeof withUiApp>[1]>[0];

async function get(fixture: Fixture, path: string): Promise<Response> {
  return await fixture.app.request(
    at(path),
    page({ authorization: `Bearer ${ADMIN_TOKEN}` }),
  );
}

const at0 = (second: number) =>
  new Date(Date.UTC(2026, 10, 29, 10, 0, second)).toISOString();

/** A model call as the OTLP mapping stores one (GenAI names), with a tool call beside it. */
const MODEL_EVENTS: EventInput[] = [
  {
    application_id: "shop",
    user_id: "user-7",
    agent_id: "chat",
    thread_id: "conv-7",
    root_trace_id: "turn-root",
    event_id: "call-1",
    kind: "llm_call",
    started_at: at0(1),
    attributes: {
      "gen_ai.request.model": "model-a",
      "gen_ai.response.model": "model-a-2026",
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 30,
    },
  },
  {
    application_id: "shop",
    user_id: "user-7",
    agent_id: "chat",
    thread_id: "conv-7",
    root_trace_id: "turn-root",
    event_id: "tool-1",
    parent_event_id: "call-1",
    kind: "tool_call",
    tool: "lookup_order",
    started_at: at0(2),
  },
];

Deno.test("mappedFields() reads tool, model (the one that answered), tokens, user and thread", () => {
  const event = {
    ...MODEL_EVENTS[0]!,
    tool: null,
    user_id: "user-7",
    thread_id: "conv-7",
    attributes: MODEL_EVENTS[0]!.attributes!,
  } as Pick<
    TraceEvent,
    "kind" | "tool" | "user_id" | "thread_id" | "attributes"
  >;
  const fields = mappedFields(event);
  assert.deepEqual(fields, {
    kind: "llm_call",
    tool: null,
    model: "model-a-2026",
    input_tokens: 120,
    output_tokens: 30,
    user_id: "user-7",
    thread_id: "conv-7",
  });
  assert.equal(tokensText(fields), "120 in / 30 out");
  assert.equal(
    tokensText({ ...fields, input_tokens: 9, output_tokens: null }),
    "9 in / – out",
  );
  assert.equal(
    tokensText({ ...fields, input_tokens: null, output_tokens: null }),
    null,
  );
  assert.equal(sharedValue([null, null]), null);
  assert.equal(sharedValue(["a", "b"]), undefined);
  assert.equal(sharedValue([]), undefined);
});

Deno.test("the finder shows and its twin lists the mapped fields of the events it lists", async () => {
  await withUiApp({
    adminToken: ADMIN_TOKEN,
    seed: (db) => ingestEvents(db, MODEL_EVENTS).then(() => {}),
  }, async (fixture) => {
    const twin = await jsonOf(await get(fixture, "/traces/find.json?q=conv-7"));
    const byId = Object.fromEntries(
      twin.event_fields.map((row: { event_id: string }) => [row.event_id, row]),
    );
    assert.deepEqual(byId["call-1"], {
      application_id: "shop",
      event_id: "call-1",
      kind: "llm_call",
      tool: null,
      model: "model-a-2026",
      input_tokens: 120,
      output_tokens: 30,
      user_id: "user-7",
      thread_id: "conv-7",
    });
    assert.equal(byId["tool-1"].tool, "lookup_order");
    const html = await (await get(fixture, "/traces/find?q=conv-7")).text();
    assert.match(html, /model<\/span> <code>model-a-2026<\/code>/);
    assert.match(html, /tokens<\/span> 120 in \/ 30 out/);
    assert.match(html, /tool<\/span> <code>lookup_order<\/code>/);
    // One user and one thread for the whole card: named once, on the card.
    assert.match(html, /user <code>user-7<\/code>/);
    assert.doesNotMatch(html, /class="fact__label">user</);
  });
});

/** A deletion run's own root, as the runner files it. */
function runEvents(runId: string, application = "trace"): EventInput[] {
  return [
    { event_id: `${runId}:run`, parent_event_id: null, kind: "run" },
    {
      event_id: `${runId}:phase:ingest`,
      parent_event_id: `${runId}:run`,
      kind: "phase",
    },
  ].map((event, i) => ({
    ...event,
    application_id: application,
    agent_id: "trace-runner",
    root_trace_id: runId,
    run_id: runId,
    started_at: at0(i),
  }));
}

Deno.test("runOfRoot() and runOfEvent() link a deletion run's own root to its run page, and nothing else", () => {
  const run = "run-20261129T100000Z-000000000001";
  assert.equal(
    runOfRoot("trace", run, { event_id: `${run}:run`, kind: "run" }),
    `/runs/${run}`,
  );
  assert.equal(
    runOfRoot("demo", run, { event_id: `${run}:run`, kind: "run" }),
    null,
  );
  assert.equal(
    runOfRoot("trace", run, { event_id: "other", kind: "run" }),
    null,
  );
  assert.equal(runOfRoot("trace", run, null), null);
  assert.equal(
    runOfEvent({ application_id: "trace", root_trace_id: run, run_id: run }),
    `/runs/${run}`,
  );
  assert.equal(
    runOfEvent({ application_id: "trace", root_trace_id: "r", run_id: null }),
    null,
  );
  assert.equal(
    runOfEvent({ application_id: "app", root_trace_id: run, run_id: run }),
    null,
  );
});

Deno.test("a run's root in the finder and inspection links its run page for an operator who may read runs", async () => {
  const run = "run-20261129T100000Z-000000000002";
  await withUiApp({
    adminToken: ADMIN_TOKEN,
    seed: (db) => ingestEvents(db, runEvents(run)).then(() => {}),
  }, async (fixture) => {
    const finder = await (await get(fixture, `/traces/find?q=${run}`)).text();
    assert.match(finder, new RegExp(`href="/runs/${run}">Open run ${run}<`));
    const inspect = await (await get(
      fixture,
      `/traces/inspect?application_id=trace&root_trace_id=${run}`,
    )).text();
    assert.match(inspect, new RegExp(`href="/runs/${run}">Open run ${run}<`));
    const twin = await jsonOf(
      await get(
        fixture,
        `/traces/inspect.json?application_id=trace&root_trace_id=${run}`,
      ),
    );
    assert.equal(twin.run_page, `/runs/${run}`);
  });
});

Deno.test("the selected event's inspection leaves out finder filters the event does not meet, so the read shows it", async () => {
  const run = "run-20261129T100000Z-000000000003";
  const namespace = "trace-test-0003";
  // As a deletion run records itself: the run event has no thread, its requests the test namespace.
  const events = runEvents(run).map((event, i) =>
    i === 0 ? event : { ...event, thread_id: namespace }
  );
  await withUiApp({
    adminToken: ADMIN_TOKEN,
    seed: (db) => ingestEvents(db, events).then(() => {}),
  }, async (fixture) => {
    const finder = await (await get(
      fixture,
      `/traces/find?thread_id=${namespace}&run_id=${run}&selected=${run}:run&selected_application_id=trace`,
    )).text();
    const href = finder.match(
      /<a class="button" href="([^"]+)">\s*Inspect its root/,
    )?.[1]?.replaceAll("&amp;", "&");
    assert.ok(href, "the selected event offers its inspection");
    const params = new URL(href, "http://x").searchParams;
    assert.equal(params.get("thread_id"), null);
    assert.equal(params.get("run_id"), run, "a filter it meets is kept");
    assert.match(params.get("from") ?? "", /thread_id%3D|thread_id=/);
    const inspect = await (await get(fixture, href)).text();
    assert.doesNotMatch(inspect, /is not in this read/);
    // An event of the thread keeps the thread.
    const child = await (await get(
      fixture,
      `/traces/find?thread_id=${namespace}&selected=${run}:phase:ingest&selected_application_id=trace`,
    )).text();
    assert.match(
      child,
      new RegExp(
        `<a class="button" href="[^"]*thread_id=${namespace}[^"]*">\\s*Inspect its root`,
      ),
    );
  });
});

Deno.test("inspection's twin carries its controls and the replay selection it would draft", async () => {
  await withHost({}, async (host) => {
    const path =
      "/traces/inspect.json?application_id=app-1&root_trace_id=root-1&agent_id=support-bot&turn_id=turn-1";
    const viewer = await jsonOf(
      await ask(host.app, "GET", path, { as: "viewer-1" }),
    );
    assert.equal(viewer.controls.reveal.allowed, false);
    assert.equal(viewer.controls.reveal.reason, "role");
    assert.equal(viewer.controls.replay_draft.allowed, false);
    assert.deepEqual(viewer.replay, {
      target: {
        agent_id: "support-bot",
        root_trace_id: "root-1",
        application_id: "app-1",
        turn_id: "turn-1",
      },
      label: "turn turn-1",
      unavailable: null,
    });
    const admin = await jsonOf(
      await ask(host.app, "GET", path, { as: "admin-1" }),
    );
    assert.equal(admin.controls.reveal.allowed, true);
    assert.equal(admin.controls.artifact_lookup.allowed, true);
    // A tenant-bound account's selection carries its bound user.
    const ada = await jsonOf(
      await ask(host.app, "GET", path, { as: "ada-viewer" }),
    );
    assert.equal(ada.replay.target.user_id, "user-ada");
    // The page: every event with a preview offers its reveal, the selected one the form.
    const html = await (await ask(
      host.app,
      "GET",
      "/traces/inspect?application_id=app-1&root_trace_id=root-1&agent_id=support-bot&selected=evt-answer",
      { as: "admin-1" },
    )).text();
    assert.equal([...html.matchAll(/class="wf-preview"/g)].length, 2);
    assert.match(html, /<div class="reveal" id="reveal">/);
    assert.match(
      html,
      /href="\/traces\/events\/evt-answer\?application_id=app-1&amp;root_trace_id=root-1&amp;agent_id=support-bot">Event page</,
    );
  });
});

Deno.test("replayChoice() names one agent's selection, or says why a read of several names none", () => {
  const event = (
    agent: string | null,
  ): TraceEvent => ({ agent_id: agent } as unknown as TraceEvent);
  const root = (agents: (string | null)[]) =>
    ({
      application_id: "app-1",
      root_trace_id: "r",
      events: agents.map(event),
    }) as unknown as Parameters<typeof replayChoice>[1];
  const request = (query: string) =>
    parseInspectParams(new URLSearchParams(query), {});
  const whole = replayChoice(request("root_trace_id=r"), root(["a", "a"]));
  assert.equal(whole.label, "the whole root");
  assert.deepEqual(whole.target, {
    agent_id: "a",
    root_trace_id: "r",
    application_id: "app-1",
    turn_id: undefined,
    run_id: undefined,
    user_id: undefined,
  });
  const two = replayChoice(request("root_trace_id=r"), root(["a", "b"]));
  assert.equal(two.target, null);
  assert.match(two.unavailable!, /one agent's events/);
  const chosen = replayChoice(
    request("root_trace_id=r&agent_id=b&run_id=x"),
    root(["b"]),
  );
  assert.equal(chosen.target?.agent_id, "b");
  assert.equal(chosen.label, "run x");
  const memories = replayChoice(request("root_trace_id=r"), root([null]));
  assert.equal(memories.target, null);
});

Deno.test("links between trace pages carry no empty finder state and name the event's page", () => {
  assert.equal(
    inspectHref(
      { application_id: "a", root_trace_id: "r", agent_id: "g" },
      new URLSearchParams(),
    ),
    "/traces/inspect?application_id=a&root_trace_id=r&agent_id=g",
  );
  assert.equal(
    inspectHref(
      { application_id: "a", root_trace_id: "r" },
      new URLSearchParams("q=t"),
    ),
    "/traces/inspect?application_id=a&root_trace_id=r&from=q%3Dt",
  );
  assert.equal(
    eventPageHref({
      event_id: "e/1",
      application_id: "a",
      root_trace_id: "r",
      agent_id: null,
    }),
    "/traces/events/e%2F1?application_id=a&root_trace_id=r",
  );
});

async function seedStores(db: TraceDb): Promise<void> {
  await ingestEvents(db, [{
    application_id: "chat",
    agent_id: "bot",
    root_trace_id: "c-1",
    event_id: "c-1",
    kind: "llm_call",
    store: "conversation",
  }]);
}

Deno.test("the health page links its event counts to the finder, which keeps the store filter in its form", async () => {
  await withUiApp(
    { adminToken: ADMIN_TOKEN, seed: seedStores },
    async (fixture) => {
      const health = await (await get(fixture, "/traces/health")).text();
      assert.match(health, /<a href="\/traces\/find">Events<\/a>/);
      assert.match(
        health,
        /<a href="\/traces\/find\?store=conversation"><code>conversation<\/code><\/a>/,
      );
      // A store without events is named, not linked.
      assert.match(health, /in store <code>tool_log<\/code>/);
      const finder =
        await (await get(fixture, "/traces/find?store=conversation"))
          .text();
      assert.match(finder, /<option value="conversation" selected>/);
      assert.match(finder, /<details class="finder-form__filters" open>/);
    },
  );
});

Deno.test("the finder of an empty index says how events get in; a search that matches nothing says how to widen it", async () => {
  await withUiApp({ adminToken: ADMIN_TOKEN }, async (fixture) => {
    const empty = await (await get(fixture, "/traces/find")).text();
    assert.match(empty, /No trace events in your scope yet/);
    assert.match(empty, /POST \/v1\/traces/);
    const none = await (await get(fixture, "/traces/find?q=nothing")).text();
    assert.match(none, /No task matches/);
    assert.match(none, /<a href="\/traces\/find">clear the search<\/a>/);
    assert.doesNotMatch(none, /No trace events in your scope yet/);
  });
});

Deno.test("a tenant-bound account's start page leads to the finder, and no trace page of a run's root links the run page", async () => {
  await withHost({}, async (host) => {
    const run = "run-20261129T100000Z-000000000003";
    await ingestEvents(host.db, runEvents(run));
    const token = "example-run-watcher-token";
    host.accounts.replace({
      ...EXAMPLE_ACCOUNTS,
      "run-watcher": { token, role: "analyst", application_id: "trace" },
    });
    const start = await (await ask(host.app, "GET", "/", { token })).text();
    assert.match(start, /href="\/traces\/find">Find incidents in your scope</);
    for (
      const path of [
        "/traces/find",
        `/traces/find?q=${run}&selected=${run}:run`,
        `/traces/inspect?application_id=trace&root_trace_id=${run}&selected=${run}:run`,
        `/traces/events/${run}:run`,
      ]
    ) {
      const response = await ask(host.app, "GET", path, { token });
      assert.equal(response.status, 200, path);
      const html = await response.text();
      assert.match(html, new RegExp(run), path);
      assert.doesNotMatch(html, /href="\/runs/, path);
    }
    // The same pages link the run for an unscoped viewer.
    const viewer =
      await (await ask(host.app, "GET", `/traces/events/${run}:run`, {
        as: "viewer-1",
      })).text();
    assert.match(viewer, new RegExp(`href="/runs/${run}"`));
    // The account resolution form is there, disabled with its reason.
    const finder = await (await ask(host.app, "GET", "/traces/find", {
      as: "support-app1",
    })).text();
    assert.match(finder, /<button type="submit" disabled>Look up user id</);
    // The browser checks the address before it is sent, by the server's rule:
    // type="email" would refuse addresses with non-ASCII local parts.
    const input = finder.match(/<input [^>]*id="account-email"[^>]*>/)?.[0];
    assert.ok(input, finder);
    assert.match(input, /type="text" inputmode="email"/);
    const pattern = input.match(/pattern="([^"]+)"/)?.[1];
    assert.equal(pattern, EMAIL_PATTERN);
    // As a browser reads a pattern: the whole value, with the v flag.
    const browser = new RegExp(`^(?:${pattern})$`, "v");
    assert.ok(browser.test("josé@exemplo.br"));
    assert.ok(!browser.test("no at sign"));
    assert.ok(!browser.test("a@b c"));
    assert.match(finder, /resolving accounts needs the operator role or above/);
  });
});

Deno.test("error pages name a conflict and a missing host hook", async () => {
  await withHost({ withoutHooks: true }, async (host) => {
    const { cookie, csrf } = await signInAs(host.app, "admin-1");
    const missing = await ask(host.app, "POST", "/traces/account/resolve", {
      cookie,
      form: { _csrf: csrf, email: "ada@example.com" },
      headers: { accept: "text/html" },
    });
    assert.equal(missing.status, 501);
    assert.match(
      await missing.text(),
      /<h1>Not configured on this server<\/h1>/,
    );
  });
  await withHost({}, async (host) => {
    const { cookie, csrf } = await signInAs(host.app, "admin-1");
    const conflict = await ask(host.app, "POST", "/traces/reveal", {
      cookie,
      form: {
        _csrf: csrf,
        agent_id: "support-bot",
        root_trace_id: "root-1",
        event_id: "evt-answer",
        reason: "SUP-9 which one",
      },
      headers: { accept: "text/html" },
    });
    assert.equal(conflict.status, 409);
    assert.match(await conflict.text(), /<h1>Conflict<\/h1>/);
  });
});
