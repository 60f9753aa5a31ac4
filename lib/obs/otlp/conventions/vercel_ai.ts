/**
 * The Vercel AI SDK's telemetry (`experimental_telemetry`): `ai.operationId`
 * names the call, `ai.telemetry.functionId` the function, and
 * `ai.telemetry.metadata.*` carries what the application added per call
 * (user, session, tenant). Its inner model spans also carry a few `gen_ai.*`
 * attributes, which the GenAI table reads first.
 *
 * @module
 */

import type { Convention } from "./_table.ts";

/** `ai.operationId` values and the event kinds they map to. */
export const VERCEL_AI_OPERATION_KINDS: Readonly<Record<string, string>> = {
  // One call of the SDK: its model calls and tool calls are its children.
  "ai.generateText": "agent_step",
  "ai.streamText": "agent_step",
  "ai.generateObject": "agent_step",
  "ai.streamObject": "agent_step",
  // One request to the model provider.
  "ai.generateText.doGenerate": "llm_call",
  "ai.streamText.doStream": "llm_call",
  "ai.generateObject.doGenerate": "llm_call",
  "ai.streamObject.doStream": "llm_call",
  "ai.toolCall": "tool_call",
  "ai.embed": "embedding",
  "ai.embed.doEmbed": "embedding",
  "ai.embedMany": "embedding",
  "ai.embedMany.doEmbed": "embedding",
};

const METADATA = "ai.telemetry.metadata";

/** The AI SDK's telemetry as a table. */
export const VERCEL_AI_CONVENTION: Convention = {
  name: "Vercel AI SDK",
  kind: { key: "ai.operationId", kinds: VERCEL_AI_OPERATION_KINDS },
  fields: {
    tenant: [`${METADATA}.tenantId`, `${METADATA}.applicationId`],
    agent: [`${METADATA}.agentId`, "ai.telemetry.functionId"],
    thread: [
      `${METADATA}.threadId`,
      `${METADATA}.sessionId`,
      `${METADATA}.conversationId`,
    ],
    user: [`${METADATA}.userId`],
    tool: ["ai.toolCall.name"],
    tool_call_id: ["ai.toolCall.id"],
    request_model: ["ai.model.id"],
    response_model: ["ai.response.model"],
    provider: ["ai.model.provider"],
    // `ai.usage.tokens` is what embedding calls report.
    input_tokens: [
      "ai.usage.inputTokens",
      "ai.usage.promptTokens",
      "ai.usage.tokens",
    ],
    output_tokens: ["ai.usage.outputTokens", "ai.usage.completionTokens"],
    finish_reasons: ["ai.response.finishReason"],
  },
  content: [
    "ai.prompt",
    "ai.prompt.messages",
    "ai.prompt.tools",
    "ai.response.text",
    "ai.response.reasoning",
    "ai.response.toolCalls",
    "ai.response.object",
    "ai.toolCall.args",
    "ai.toolCall.result",
    "ai.value",
    "ai.values",
  ],
  contentPatterns: [],
  withheld: [/^ai\.embeddings?$/],
};
