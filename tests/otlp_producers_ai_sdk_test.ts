/**
 * The Vercel AI SDK (`ai` v5) with its mock models and `experimental_telemetry`
 * on: a generateText call that calls a tool, and an embedMany call, exported
 * by the unmodified OpenTelemetry SDK to `/v1/traces`.
 */

import assert from "node:assert/strict";
import { loadCommand } from "../cli.ts";
import type { TraceEvent } from "../lib/obs/mod.ts";
import { createOtlpApi } from "../routes/otlp.ts";
import { runAiSdkApp } from "./_ai_sdk.ts";
import { captureIo, withDb } from "./_helpers.ts";
import {
  assertOnlyPreviewsHold,
  eventOf,
  postSpans,
  previewText,
  type Producer,
  producer,
  storedEvents,
  withTraceServer,
} from "./otlp_producers_support.ts";
import { initializeObs } from "../lib/obs/mod.ts";

const PROMPT = "SECRET-PROMPT-weather-for-alice";
const ARGS_CITY = "SECRET-CITY-Paris";
const RESULT_SKY = "SECRET-RESULT-sunny";
const ANSWER = "SECRET-ANSWER-it-is-sunny";
const EMBED_VALUES = ["SECRET-EMBED-alice-likes-tea", "SECRET-EMBED-bob"];
// A vector value no other number in the test shares: it must reach neither metadata nor previews.
const VECTOR_MARK = 0.7316284;
const SECRETS = [PROMPT, ARGS_CITY, RESULT_SKY, ANSWER, ...EMBED_VALUES];

/** The AI SDK turn, saying only secrets: none of them may reach metadata. */
async function runApp(p: Producer): Promise<void> {
  const text = await runAiSdkApp(p, {
    prompt: PROMPT,
    city: ARGS_CITY,
    sky: RESULT_SKY,
    answer: ANSWER,
    embedValues: EMBED_VALUES,
    vectorValue: VECTOR_MARK,
  });
  assert.equal(text, ANSWER);
}

/** Runs the app against a served `createApp`; returns what the index kept. */
async function recordRun(): Promise<TraceEvent[]> {
  return await withTraceServer(async (url, db) => {
    await runApp(producer({ "service.name": "shop-assistant" }, url));
    return await storedEvents(db);
  });
}

Deno.test("AI SDK telemetry maps to agent step, model call, tool call and embedding events", async () => {
  const events = await recordRun();
  assert.deepEqual(
    events.map((e) => [e.attributes["otel.span_name"], e.kind]).sort(),
    [
      ["ai.embedMany", "embedding"],
      ["ai.embedMany.doEmbed", "embedding"],
      ["ai.generateText", "agent_step"],
      ["ai.generateText.doGenerate", "llm_call"],
      ["ai.generateText.doGenerate", "llm_call"],
      ["ai.toolCall", "tool_call"],
    ],
  );
  for (const event of events) {
    // Telemetry metadata and the function id give the scope; service.name the tenant.
    assert.equal(event.application_id, "shop-assistant");
    assert.equal(event.agent_id, "support-chat");
    assert.equal(event.user_id, "user-1");
    assert.equal(event.thread_id, "thread-1");
    assert.equal(event.attributes["ai.telemetry.functionId"], "support-chat");
  }
  const step = eventOf(events, "ai.generateText");
  const toolCall = eventOf(events, "ai.toolCall");
  assert.equal(toolCall.tool, "weather");
  assert.equal(toolCall.store, "tool_log");
  assert.equal(toolCall.parent_event_id, step.event_id);
  assert.equal(toolCall.root_trace_id, step.root_trace_id);
  assert.equal(toolCall.attributes["gen_ai.tool.call.id"], "call-1");
  const calls = events.filter((e) => e.kind === "llm_call");
  for (const call of calls) {
    assert.equal(call.store, "conversation");
    assert.equal(call.parent_event_id, step.event_id);
    assert.equal(call.attributes["gen_ai.request.model"], "mock-chat-1");
    assert.equal(call.attributes["gen_ai.response.model"], "mock-chat-1");
    assert.equal(call.attributes["gen_ai.provider.name"], "mock-provider");
    assert.equal(call.attributes["gen_ai.usage.input_tokens"], 11);
    assert.equal(call.attributes["gen_ai.usage.output_tokens"], 7);
    assert.equal(
      call.attributes["ai.operationId"],
      "ai.generateText.doGenerate",
    );
  }
  assert.deepEqual(
    calls.map((c) => c.attributes["gen_ai.response.finish_reasons"]).sort(),
    ["stop", "tool-calls"],
  );
  // The outer call reports the last step's usage (`ai.usage.promptTokens`).
  assert.equal(step.attributes["gen_ai.usage.input_tokens"], 11);
  assert.equal(step.attributes["gen_ai.request.model"], "mock-chat-1");
  assert.equal(step.store, "trace");
  const embed = eventOf(events, "ai.embedMany");
  assert.equal(embed.attributes["gen_ai.request.model"], "mock-embed-1");
  assert.equal(embed.attributes["gen_ai.usage.input_tokens"], 9);
  assert.equal(embed.tool, null);
});

Deno.test("AI SDK content attributes reach previews only, and embedding vectors neither", async () => {
  await withTraceServer(async (url, db) => {
    await runApp(producer({ "service.name": "shop-assistant" }, url));
    const events = await storedEvents(db);
    assert.equal(events.length, 6);
    const previews = await previewText(db);
    for (const secret of SECRETS) {
      assert.ok(previews.includes(secret), `${secret} missing from previews`);
    }
    assert.match(previews, /^ai\.toolCall\.args: /m);
    assert.match(previews, /^ai\.toolCall\.result: /m);
    assert.match(previews, /^ai\.values: /m);
    assert.ok(!previews.includes(String(VECTOR_MARK)), "vectors in a preview");
    await assertOnlyPreviewsHold(db, [...SECRETS, String(VECTOR_MARK)]);
    // The SDK's request headers are neither content nor metadata.
    for (const event of events) {
      assert.ok(
        !Object.keys(event.attributes).some((k) => k.startsWith("ai.request.")),
      );
    }
  });
});

Deno.test("trace events query shows the kind, tool, model, tokens, user and thread of AI SDK events", async () => {
  await withTraceServer(async (url, _db, dataDir) => {
    await runApp(producer({ "service.name": "shop-assistant" }, url));
    const io = captureIo();
    const loaded = await loadCommand([
      "events",
      "query",
      "--data-dir",
      dataDir,
    ]);
    assert.equal(await loaded.command(loaded.args, io), 0);
    const lines = io.stdout().split("\n");
    const line = (kind: string) => {
      const found = lines.find((l) => new RegExp(`Z {2}${kind} `).test(l));
      assert.ok(found, `no ${kind} line in:\n${io.stdout()}`);
      return found;
    };
    assert.match(
      line("tool_call"),
      / {2}agent=support-chat {2}thread=thread-1 user=user-1 {2}op=tool:weather( |$)/,
    );
    assert.match(
      line("llm_call"),
      / {2}thread=thread-1 user=user-1 model=mock-chat-1 tokens=11\/7( |$)/,
    );
    assert.match(
      line("embedding"),
      /user=user-1 model=mock-embed-1 tokens=9\/-/,
    );
  });
});

Deno.test("AI SDK spans take their tenant from the default application, and the answer says so", async () => {
  const p = producer({ "service.name": "shop-assistant" });
  await runApp(p);
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createOtlpApi({ db, defaultApplicationId: "shop" });
    const response = await postSpans(app, p.spans());
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      partialSuccess: {
        rejectedSpans: "0",
        errorMessage:
          '6 spans had no tenant.id or application.id; application_id "shop" was taken from --default-application',
      },
    });
    const events = await storedEvents(db);
    assert.deepEqual([...new Set(events.map((e) => e.application_id))], [
      "shop",
    ]);
  });
});
