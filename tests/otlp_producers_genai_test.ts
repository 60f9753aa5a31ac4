/**
 * The current OpenTelemetry GenAI conventions (agents, tools, conversations,
 * usage, data sources and memory), the precedence rule when a span carries
 * several conventions, and the tenant rule: spans made with the unmodified
 * OpenTelemetry SDK and sent to `/v1/traces`.
 */

import assert from "node:assert/strict";
import {
  type Attributes,
  ROOT_CONTEXT,
  type Span,
  trace,
} from "@opentelemetry/api";
import type { TraceDb } from "../lib/db.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { tenantForRequest } from "../lib/obs/otlp/mod.ts";
import { createOtlpApi, type OtlpApiDeps } from "../routes/otlp.ts";
import { withDb } from "./_helpers.ts";
import {
  assertOnlyPreviewsHold,
  eventOf,
  postSpans,
  type Producer,
  producer,
  storedEvents,
  withTraceServer,
} from "./otlp_producers_support.ts";

const TOOL_ARGS = "SECRET-ARGS-book-table-for-two";
const MEMORY_TEXT = "SECRET-MEMORY-alice-is-vegetarian";

/** Starts one span under `parent` (a root span when absent); the caller ends it. */
function span(
  p: Producer,
  name: string,
  attributes: Attributes,
  parent?: Span,
): Span {
  const ctx = parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
  return p.tracer.startSpan(name, { attributes }, ctx);
}

/** An agent turn written with the GenAI conventions only. */
async function genaiTurn(p: Producer): Promise<void> {
  const scope = { "gen_ai.conversation.id": "conv-1", "user.id": "user-1" };
  const agent = span(p, "invoke_agent planner", {
    ...scope,
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.id": "agent-planner",
    "gen_ai.agent.name": "Planner",
  });
  const child = (name: string, attributes: Attributes) =>
    span(p, name, {
      ...scope,
      "gen_ai.agent.id": "agent-planner",
      ...attributes,
    }, agent).end();
  child("chat gpt-x", {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-x",
    "gen_ai.response.model": "gpt-x-2026",
    "gen_ai.usage.input_tokens": 320,
    "gen_ai.usage.output_tokens": 41,
    "gen_ai.response.finish_reasons": ["tool_calls"],
  });
  child("execute_tool book_table", {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "book_table",
    "gen_ai.tool.call.id": "call-9",
    "gen_ai.tool.type": "function",
    "gen_ai.tool.call.arguments": TOOL_ARGS,
  });
  child("embeddings text-embed", {
    "gen_ai.operation.name": "embeddings",
    "gen_ai.request.model": "text-embed",
    "gen_ai.usage.input_tokens": 12,
  });
  child("retrieval kb", {
    "gen_ai.operation.name": "retrieval",
    "gen_ai.data_source.id": "kb-7",
    "gen_ai.retrieval.documents": JSON.stringify([
      { id: "doc-1", score: 0.8 },
    ]),
  });
  child("search_memory prefs", {
    "gen_ai.operation.name": "search_memory",
    "gen_ai.memory.store.id": "store-1",
    "gen_ai.memory.records": JSON.stringify([
      { id: "mem-1", score: 0.9, content: MEMORY_TEXT },
    ]),
  });
  child("upsert_memory prefs", {
    "gen_ai.operation.name": "upsert_memory",
    "gen_ai.memory.store.id": "store-1",
    "gen_ai.memory.record.id": "mem-2",
    "gen_ai.memory.records": JSON.stringify([
      { id: "mem-3", content: MEMORY_TEXT },
    ]),
  });
  child("delete_memory_store prefs", {
    "gen_ai.operation.name": "delete_memory_store",
    "gen_ai.memory.store.id": "store-1",
  });
  agent.end();
  await p.close();
}

Deno.test("GenAI spans map to kinds, agent, thread, user, tool, model, usage and memory references", async () => {
  await withTraceServer(async (url, db) => {
    await genaiTurn(producer({ "service.name": "concierge" }, url));
    const events = await storedEvents(db);
    assert.equal(events.length, 8);
    for (const event of events) {
      assert.equal(event.application_id, "concierge");
      assert.equal(event.agent_id, "agent-planner");
      assert.equal(event.thread_id, "conv-1");
      assert.equal(event.user_id, "user-1");
    }
    const agent = eventOf(events, "invoke_agent planner");
    assert.equal(agent.kind, "agent_invocation");
    assert.equal(agent.attributes["gen_ai.agent.name"], "Planner");
    const chat = eventOf(events, "chat gpt-x");
    assert.equal(chat.kind, "llm_call");
    assert.equal(chat.parent_event_id, agent.event_id);
    assert.equal(chat.attributes["gen_ai.response.model"], "gpt-x-2026");
    assert.equal(chat.attributes["gen_ai.usage.input_tokens"], 320);
    assert.equal(chat.attributes["gen_ai.usage.output_tokens"], 41);
    assert.equal(
      chat.attributes["gen_ai.response.finish_reasons"],
      "tool_calls",
    );
    const tool = eventOf(events, "execute_tool book_table");
    assert.equal(tool.kind, "tool_call");
    assert.equal(tool.tool, "book_table");
    assert.equal(tool.attributes["gen_ai.tool.call.id"], "call-9");
    assert.equal(tool.attributes["gen_ai.tool.type"], "function");
    const embed = eventOf(events, "embeddings text-embed");
    assert.equal(embed.kind, "embedding");
    assert.equal(embed.attributes["gen_ai.usage.input_tokens"], 12);
    const retrieval = eventOf(events, "retrieval kb");
    assert.equal(retrieval.kind, "retrieval");
    assert.deepEqual(retrieval.resources, [
      { type: "data_source", id: "kb-7", role: "referenced" },
      { type: "document", id: "doc-1", role: "retrieved" },
    ]);
    const search = eventOf(events, "search_memory prefs");
    assert.equal(search.kind, "memory_search");
    assert.deepEqual(search.resources, [
      { type: "memory_store", id: "store-1", role: "referenced" },
      { type: "memory_record", id: "mem-1", role: "retrieved" },
    ]);
    const upsert = eventOf(events, "upsert_memory prefs");
    assert.equal(upsert.kind, "memory_write");
    assert.deepEqual(upsert.resources, [
      { type: "memory_store", id: "store-1", role: "referenced" },
      { type: "memory_record", id: "mem-2", role: "written" },
      { type: "memory_record", id: "mem-3", role: "written" },
    ]);
    assert.equal(upsert.selection, null);
    const dropped = eventOf(events, "delete_memory_store prefs");
    assert.equal(dropped.kind, "memory_store_delete");
    assert.deepEqual(dropped.resources, [
      { type: "memory_store", id: "store-1", role: "deleted" },
    ]);
    await assertOnlyPreviewsHold(db, [TOOL_ARGS, MEMORY_TEXT]);
  });
});

Deno.test("when a span carries several conventions, GenAI wins, then the AI SDK, then OpenInference; span before resource", async () => {
  const p = producer({ "service.name": "mixed", "user.id": "resource-user" });
  span(p, "all three", {
    "gen_ai.operation.name": "chat",
    "ai.operationId": "ai.toolCall",
    "openinference.span.kind": "TOOL",
    "gen_ai.request.model": "genai-model",
    "ai.model.id": "sdk-model",
    "llm.model_name": "oi-model",
    "user.id": "genai-user",
    "ai.telemetry.metadata.userId": "sdk-user",
  }).end();
  // What @arizeai/openinference-vercel adds to an AI SDK span.
  span(p, "sdk and openinference", {
    "ai.operationId": "ai.generateText",
    "openinference.span.kind": "AGENT",
    "ai.telemetry.metadata.userId": "sdk-user",
    "llm.token_count.prompt": 5,
    "ai.usage.promptTokens": 6,
  }).end();
  span(p, "openinference only", {
    "openinference.span.kind": "retriever",
    "llm.token_count.prompt": 5,
  }).end();
  await p.close();
  await withApi(async (app, db) => {
    assert.equal((await postSpans(app, p.spans())).status, 200);
    const events = await storedEvents(db);
    const all = eventOf(events, "all three");
    assert.equal(all.kind, "llm_call");
    assert.equal(all.attributes["gen_ai.request.model"], "genai-model");
    assert.equal(all.user_id, "genai-user");
    const sdk = eventOf(events, "sdk and openinference");
    assert.equal(sdk.kind, "agent_step");
    assert.equal(sdk.user_id, "sdk-user");
    assert.equal(sdk.attributes["gen_ai.usage.input_tokens"], 6);
    const oi = eventOf(events, "openinference only");
    assert.equal(oi.kind, "retrieval");
    assert.equal(oi.user_id, "resource-user");
    assert.equal(oi.attributes["gen_ai.usage.input_tokens"], 5);
  });
});

async function withApi(
  fn: (app: ReturnType<typeof createOtlpApi>, db: TraceDb) => Promise<void>,
  deps: Omit<OtlpApiDeps, "db"> = {},
): Promise<void> {
  await withDb(async (db) => {
    await initializeObs(db);
    await fn(createOtlpApi({ db, log: () => {}, ...deps }), db);
  });
}

/** Three spans: one naming tenant `acme`, one naming `other`, one naming none. */
async function tenantSpans(): Promise<Producer> {
  const p = producer({ "service.name": "svc" });
  const agent = { "gen_ai.agent.id": "a-1" };
  span(p, "names acme", { ...agent, "tenant.id": "acme" }).end();
  span(p, "names other", { ...agent, "application.id": "other" }).end();
  span(p, "names none", agent).end();
  await p.close();
  return p;
}

function named(p: Producer, ...names: string[]) {
  return p.spans().filter((s) => names.includes(s.name));
}

Deno.test("a span's own tenant wins; others take --default-application, else service.name, and the answer says which", async () => {
  const p = await tenantSpans();
  await withApi(async (app, db) => {
    const response = await postSpans(app, p.spans());
    assert.equal(response.status, 200);
    assert.equal(
      (await response.json()).partialSuccess.errorMessage,
      '1 span had no tenant.id or application.id; application_id "fallback" was taken from --default-application',
    );
    const events = await storedEvents(db);
    assert.equal(eventOf(events, "names acme").application_id, "acme");
    assert.equal(eventOf(events, "names other").application_id, "other");
    assert.equal(eventOf(events, "names none").application_id, "fallback");
  }, { defaultApplicationId: "fallback" });
  await withApi(async (app, db) => {
    const response = await postSpans(app, named(p, "names none"));
    assert.equal(
      (await response.json()).partialSuccess.errorMessage,
      `1 span had no tenant.id or application.id; application_id "svc" was taken from the resource's service.name`,
    );
    assert.equal((await storedEvents(db))[0]?.application_id, "svc");
  });
});

Deno.test("a credential bound to an application gives it to spans that name none and refuses spans naming another", async () => {
  const p = await tenantSpans();
  const deps = { credentialScope: () => ({ application_id: "acme" }) };
  await withApi(async (app, db) => {
    const refused = await postSpans(app, p.spans());
    assert.equal(refused.status, 403);
    const status = await refused.json();
    assert.equal(status.code, 7);
    assert.equal(status.error.code, "forbidden");
    assert.match(
      status.message,
      /^Cannot ingest OTLP span 1 \(.*\): it names application "other" but the credential that sent it may write only to "acme"/,
    );
    assert.equal((await storedEvents(db)).length, 0);
    const accepted = await postSpans(app, named(p, "names acme", "names none"));
    assert.equal(accepted.status, 200);
    assert.equal(
      (await accepted.json()).partialSuccess.errorMessage,
      '1 span had no tenant.id or application.id; application_id "acme" was taken from the ingest credential',
    );
    const events = await storedEvents(db);
    assert.deepEqual(events.map((e) => e.application_id), ["acme", "acme"]);
  }, { ...deps, defaultApplicationId: "fallback" });
});

Deno.test("the AI SDK's telemetry metadata can name the tenant", async () => {
  const p = producer({ "service.name": "svc" });
  span(p, "ai.generateText", {
    "ai.operationId": "ai.generateText",
    "ai.telemetry.functionId": "chat",
    "ai.telemetry.metadata.tenantId": "tenant-from-metadata",
  }).end();
  await p.close();
  await withApi(async (app, db) => {
    const response = await postSpans(app, p.spans());
    assert.deepEqual(await response.json(), {});
    const [event] = await storedEvents(db);
    assert.equal(event?.application_id, "tenant-from-metadata");
    assert.equal(event?.agent_id, "chat");
  }, { defaultApplicationId: "fallback" });
});

Deno.test("tenantForRequest() binds to the credential's application before the server default", () => {
  assert.deepEqual(tenantForRequest(), { bound: null, fallback: null });
  assert.deepEqual(tenantForRequest({ defaultApplicationId: "d" }), {
    bound: null,
    fallback: { applicationId: "d", source: "default_application" },
  });
  assert.deepEqual(
    tenantForRequest({
      credential: { application_id: "acme" },
      defaultApplicationId: "d",
    }),
    {
      bound: "acme",
      fallback: { applicationId: "acme", source: "credential" },
    },
  );
  // An account scoped to a user only is not bound to an application.
  assert.deepEqual(tenantForRequest({ credential: {} }).bound, null);
});
