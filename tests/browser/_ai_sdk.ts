/**
 * One turn of an application built on the Vercel AI SDK (`ai` v5, its mock
 * models, `experimental_telemetry` on), exported by the unmodified
 * OpenTelemetry SDK to a Trace server's `/v1/traces`: a generateText call
 * that calls a tool, then an embedMany call. The trace pages are expected to
 * show what it maps: kinds, the tool, models, tokens, user and thread.
 */

import { embedMany, generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockEmbeddingModelV2, MockLanguageModelV2 } from "ai/test";
import { producer } from "../otlp_producers_support.ts";

/** What the turn records, as the pages should show it. */
export const AI_SDK_TURN = {
  application_id: "shop-assistant",
  agent_id: "support-chat",
  user_id: "user-1",
  thread_id: "thread-1",
  chat_model: "mock-chat-1",
  embed_model: "mock-embed-1",
  tool: "weather",
  input_tokens: 11,
  output_tokens: 7,
} as const;

const usage = { inputTokens: 11, outputTokens: 7, totalTokens: 18 };

/** Runs the turn with its spans exported to `origin` (a Trace server). */
export async function runAiSdkTurn(origin: string): Promise<void> {
  const p = producer({ "service.name": AI_SDK_TURN.application_id }, origin);
  const telemetry = {
    isEnabled: true,
    tracer: p.tracer,
    functionId: AI_SDK_TURN.agent_id,
    metadata: {
      userId: AI_SDK_TURN.user_id,
      sessionId: AI_SDK_TURN.thread_id,
    },
  };
  const model = new MockLanguageModelV2({
    modelId: AI_SDK_TURN.chat_model,
    doGenerate: [{
      content: [{
        type: "tool-call",
        toolCallId: "call-1",
        toolName: AI_SDK_TURN.tool,
        input: JSON.stringify({ city: "Paris" }),
      }],
      finishReason: "tool-calls",
      usage,
      warnings: [],
    }, {
      content: [{ type: "text", text: "It is sunny in Paris." }],
      finishReason: "stop",
      usage,
      warnings: [],
    }],
  });
  const weather = tool({
    description: "Current weather of a city",
    inputSchema: jsonSchema<{ city: string }>({
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    }),
    execute: ({ city }) => Promise.resolve({ city, sky: "sunny" }),
  });
  await generateText({
    model,
    prompt: "What is the weather in Paris?",
    tools: { weather },
    stopWhen: stepCountIs(3),
    experimental_telemetry: telemetry,
  });
  const embedder = new MockEmbeddingModelV2<string>({
    modelId: AI_SDK_TURN.embed_model,
    maxEmbeddingsPerCall: 2,
    doEmbed: ({ values }) =>
      Promise.resolve({
        embeddings: values.map(() => [0.25, 0.5]),
        usage: { tokens: 9 },
      }),
  });
  await embedMany({
    model: embedder,
    values: ["tea", "coffee"],
    experimental_telemetry: telemetry,
  });
  await p.close();
}
