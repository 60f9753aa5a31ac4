/**
 * One turn of an application built on the Vercel AI SDK (`ai` v5, its mock
 * models, `experimental_telemetry` on): a generateText call that calls a
 * tool, then an embedMany call, traced by the unmodified OpenTelemetry SDK.
 * The identities are fixed; what the turn says is the caller's (secret
 * markers for leak checks, readable text for pages).
 */

import { embedMany, generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockEmbeddingModelV2, MockLanguageModelV2 } from "ai/test";
import type { Producer } from "./otlp_producers_support.ts";

/** Who the turn is and what it runs, as the index should record it. */
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

/** What the turn says. */
export interface AiSdkTexts {
  prompt: string;
  /** The tool call's argument. */
  city: string;
  /** The tool's result. */
  sky: string;
  answer: string;
  embedValues: string[];
  /** The first component of every embedding. */
  vectorValue: number;
}

const usage = {
  inputTokens: AI_SDK_TURN.input_tokens,
  outputTokens: AI_SDK_TURN.output_tokens,
  totalTokens: AI_SDK_TURN.input_tokens + AI_SDK_TURN.output_tokens,
};

/** Runs the turn on `p`'s tracer, then closes `p`; returns the generated text. */
export async function runAiSdkApp(
  p: Producer,
  texts: AiSdkTexts,
): Promise<string> {
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
        input: JSON.stringify({ city: texts.city }),
      }],
      finishReason: "tool-calls",
      usage,
      warnings: [],
    }, {
      content: [{ type: "text", text: texts.answer }],
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
    execute: ({ city }) => Promise.resolve({ city, sky: texts.sky }),
  });
  const result = await generateText({
    model,
    prompt: texts.prompt,
    tools: { [AI_SDK_TURN.tool]: weather },
    stopWhen: stepCountIs(3),
    experimental_telemetry: telemetry,
  });
  const embedder = new MockEmbeddingModelV2<string>({
    modelId: AI_SDK_TURN.embed_model,
    maxEmbeddingsPerCall: 2,
    doEmbed: ({ values }) =>
      Promise.resolve({
        embeddings: values.map(() => [texts.vectorValue, 0.5]),
        usage: { tokens: 9 },
      }),
  });
  await embedMany({
    model: embedder,
    values: texts.embedValues,
    experimental_telemetry: telemetry,
  });
  await p.close();
  return result.text;
}
