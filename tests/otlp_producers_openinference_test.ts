/**
 * OpenInference: an agent, a retriever, a model call and a tool instrumented
 * with `@arizeai/openinference-core` (its `trace*` wrappers, attribute
 * helpers and session/user context), exported by the unmodified
 * OpenTelemetry SDK to `/v1/traces`.
 */

import assert from "node:assert/strict";
import {
  getLLMAttributes,
  getRetrieverAttributes,
  getToolAttributes,
  setSession,
  setUser,
  traceAgent,
  traceLLM,
  traceRetriever,
  traceTool,
} from "@arizeai/openinference-core";
import {
  OpenInferenceSpanKind,
  SemanticConventions as OI,
} from "@arizeai/openinference-semantic-conventions";
import { context } from "@opentelemetry/api";
import { queryTraceEvents } from "../lib/obs/query/mod.ts";
import {
  OPENINFERENCE_CONVENTION,
  OPENINFERENCE_KINDS,
} from "../lib/obs/otlp/mod.ts";
import {
  assertOnlyPreviewsHold,
  eventOf,
  previewText,
  type Producer,
  producer,
  storedEvents,
  withTraceServer,
} from "./otlp_producers_support.ts";

const QUERY = "SECRET-QUERY-what-does-alice-drink";
const DOC_ONE = "SECRET-DOC-alice-likes-tea";
const DOC_TWO = "SECRET-DOC-alice-hates-coffee";
const ANSWER = "SECRET-ANSWER-tea";
const SECRETS = [QUERY, DOC_ONE, DOC_TWO, ANSWER];

/** A small RAG agent: retrieve, ask the model, call a tool. */
async function runAgent(p: Producer): Promise<void> {
  const { tracer } = p;
  const retrieve = traceRetriever(
    (query: string) =>
      Promise.resolve([
        { id: "doc-1", content: `${DOC_ONE} (${query})`, score: 0.92 },
        { id: "doc-2", content: DOC_TWO, score: 0.41, metadata: { kb: "x" } },
      ]),
    {
      tracer,
      name: "kb-search",
      processOutput: (documents) => getRetrieverAttributes({ documents }),
    },
  );
  const answer = traceLLM((_prompt: string) => Promise.resolve(ANSWER), {
    tracer,
    name: "chat",
    processOutput: () =>
      getLLMAttributes({
        provider: "openai",
        modelName: "gpt-test",
        tokenCount: { prompt: 120, completion: 8, total: 128 },
      }),
  });
  const remember = traceTool(
    (_fact: { drink: string }) => Promise.resolve("stored"),
    {
      tracer,
      name: "save_preference",
      processOutput: () =>
        getToolAttributes({ name: "save_preference", parameters: {} }),
    },
  );
  const agent = traceAgent(async (question: string) => {
    const documents = await retrieve(question);
    const text = await answer(documents.map((d) => d.content).join("\n"));
    await remember({ drink: text });
    return text;
  }, { tracer, name: "rag-agent" });
  const scope = setUser(setSession(context.active(), { sessionId: "sess-1" }), {
    userId: "user-1",
  });
  assert.equal(await context.with(scope, () => agent(QUERY)), ANSWER);
  await p.close();
}

Deno.test("OpenInference spans map to agent, retrieval, model and tool events with their scope", async () => {
  await withTraceServer(async (url, db) => {
    await runAgent(
      producer({ "service.name": "rag-service", "tenant.id": "acme" }, url),
    );
    const events = await storedEvents(db);
    assert.equal(events.length, 4);
    for (const event of events) {
      assert.equal(event.application_id, "acme");
      assert.equal(event.user_id, "user-1");
      assert.equal(event.thread_id, "sess-1");
      assert.equal(event.agent_id, "rag-service");
    }
    const agent = eventOf(events, "rag-agent");
    assert.equal(agent.kind, "agent_invocation");
    const retrieval = eventOf(events, "kb-search");
    assert.equal(retrieval.kind, "retrieval");
    assert.equal(retrieval.parent_event_id, agent.event_id);
    assert.deepEqual(retrieval.resources, [
      { type: "document", id: "doc-1", role: "retrieved" },
      { type: "document", id: "doc-2", role: "retrieved" },
    ]);
    assert.deepEqual(
      retrieval.selection?.candidates.map((c) => [c.ref.id, c.rank, c.score]),
      [["doc-1", 1, 0.92], ["doc-2", 2, 0.41]],
    );
    const call = eventOf(events, "chat");
    assert.equal(call.kind, "llm_call");
    assert.equal(call.store, "conversation");
    assert.equal(call.attributes["gen_ai.request.model"], "gpt-test");
    assert.equal(call.attributes["gen_ai.provider.name"], "openai");
    assert.equal(call.attributes["gen_ai.usage.input_tokens"], 120);
    assert.equal(call.attributes["gen_ai.usage.output_tokens"], 8);
    const tool = eventOf(events, "save_preference");
    assert.equal(tool.kind, "tool_call");
    assert.equal(tool.tool, "save_preference");
    assert.equal(tool.store, "tool_log");
  });
});

Deno.test("OpenInference retrievals are found by the documents they returned, and their text stays in previews", async () => {
  await withTraceServer(async (url, db) => {
    await runAgent(producer({ "service.name": "rag-service" }, url));
    const page = await queryTraceEvents(db, {
      resources: [{ type: "document", id: "doc-2" }],
    });
    assert.deepEqual(page.events.map((e) => e.kind), ["retrieval"]);
    const previews = await previewText(db);
    for (const secret of SECRETS) {
      assert.ok(previews.includes(secret), `${secret} missing from previews`);
    }
    await assertOnlyPreviewsHold(db, SECRETS);
  });
});

Deno.test("the OpenInference table uses the attribute names of @arizeai/openinference-semantic-conventions", () => {
  assert.deepEqual(
    Object.keys(OPENINFERENCE_KINDS).sort(),
    Object.values(OpenInferenceSpanKind).sort(),
  );
  const { kind, fields, content } = OPENINFERENCE_CONVENTION;
  assert.equal(kind.key, OI.OPENINFERENCE_SPAN_KIND);
  assert.deepEqual(fields.thread, [OI.SESSION_ID]);
  assert.deepEqual(fields.user, [OI.USER_ID]);
  assert.deepEqual(fields.agent, [OI.AGENT_NAME]);
  assert.deepEqual(fields.tool, [OI.TOOL_NAME]);
  assert.deepEqual(fields.tool_call_id, [OI.TOOL_ID, OI.TOOL_CALL_ID]);
  assert.deepEqual(fields.request_model, [
    OI.LLM_REQUEST_MODEL_NAME,
    OI.LLM_MODEL_NAME,
    OI.EMBEDDING_MODEL_NAME,
    OI.RERANKER_MODEL_NAME,
  ]);
  assert.deepEqual(fields.response_model, [OI.LLM_RESPONSE_MODEL_NAME]);
  assert.deepEqual(fields.provider, [OI.LLM_PROVIDER, OI.LLM_SYSTEM]);
  assert.deepEqual(fields.input_tokens, [OI.LLM_TOKEN_COUNT_PROMPT]);
  assert.deepEqual(fields.output_tokens, [OI.LLM_TOKEN_COUNT_COMPLETION]);
  assert.deepEqual(fields.finish_reasons, [OI.LLM_FINISH_REASON]);
  for (
    const key of [
      OI.INPUT_VALUE,
      OI.OUTPUT_VALUE,
      OI.LLM_PROMPTS,
      OI.TOOL_PARAMETERS,
    ]
  ) {
    assert.ok(content.includes(key), `${key} is not treated as content`);
  }
  assert.equal(OI.RETRIEVAL_DOCUMENTS, "retrieval.documents");
  assert.equal(OI.DOCUMENT_ID, "document.id");
  assert.equal(OI.DOCUMENT_SCORE, "document.score");
});
