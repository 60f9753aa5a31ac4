/**
 * OpenInference (Arize): `openinference.span.kind` names the span, flattened
 * `retrieval.documents.N.document.*` attributes list what a retriever
 * returned (read by `../_resources.ts`), `session.id` and `user.id` the
 * scope.
 *
 * @module
 */

import type { Convention } from "./_table.ts";

/** `openinference.span.kind` values and the event kinds they map to. */
export const OPENINFERENCE_KINDS: Readonly<Record<string, string>> = {
  LLM: "llm_call",
  TOOL: "tool_call",
  RETRIEVER: "retrieval",
  RERANKER: "selection",
  EMBEDDING: "embedding",
  AGENT: "agent_invocation",
  CHAIN: "chain",
  GUARDRAIL: "guardrail",
  EVALUATOR: "evaluation",
  PROMPT: "prompt",
};

/** OpenInference as a table. */
export const OPENINFERENCE_CONVENTION: Convention = {
  name: "OpenInference",
  kind: {
    key: "openinference.span.kind",
    kinds: OPENINFERENCE_KINDS,
    upperCase: true,
  },
  fields: {
    agent: ["agent.name"],
    thread: ["session.id"],
    user: ["user.id"],
    tool: ["tool.name"],
    tool_call_id: ["tool.id", "tool_call.id"],
    request_model: [
      "llm.request.model_name",
      "llm.model_name",
      "embedding.model_name",
      "reranker.model_name",
    ],
    response_model: ["llm.response.model_name"],
    provider: ["llm.provider", "llm.system"],
    input_tokens: ["llm.token_count.prompt"],
    output_tokens: ["llm.token_count.completion"],
    finish_reasons: ["llm.finish_reason"],
  },
  content: [
    "input.value",
    "output.value",
    "llm.prompts",
    "tool.parameters",
    "tool_call.function.arguments",
    "message.content",
  ],
  contentPatterns: [
    /^llm\.(input|output)_messages\./,
    /^llm\.prompt_template\./,
    /^llm\.tools\./,
    /^(retrieval\.documents|reranker\.(input|output)_documents)\.\d+\.document\.(content|metadata)$/,
    /^reranker\.query$/,
    /^embedding\.embeddings\.\d+\.embedding\.text$/,
  ],
  withheld: [/^embedding\.embeddings\.\d+\.embedding\.vector$/],
};
