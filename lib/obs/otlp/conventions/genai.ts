/**
 * The OpenTelemetry GenAI semantic conventions (the `gen_ai.*` registry,
 * including its agent, tool, retrieval and memory attributes), with the
 * general `user.id`, `enduser.id` and `session.id` attributes beside them.
 *
 * @module
 */

import type { Convention } from "./_table.ts";

/** `gen_ai.operation.name` values and the event kinds they map to. */
export const OPERATION_KINDS: Readonly<Record<string, string>> = {
  chat: "llm_call",
  text_completion: "llm_call",
  generate_content: "llm_call",
  embeddings: "embedding",
  retrieval: "retrieval",
  execute_tool: "tool_call",
  create_agent: "agent_creation",
  invoke_agent: "agent_invocation",
  invoke_workflow: "workflow_invocation",
  plan: "plan",
  search_memory: "memory_search",
  create_memory: "memory_write",
  update_memory: "memory_update",
  upsert_memory: "memory_write",
  delete_memory: "memory_delete",
  create_memory_store: "memory_store_create",
  delete_memory_store: "memory_store_delete",
};

/** The GenAI conventions as a table. */
export const GENAI_CONVENTION: Convention = {
  name: "OpenTelemetry GenAI",
  kind: { key: "gen_ai.operation.name", kinds: OPERATION_KINDS },
  fields: {
    agent: ["gen_ai.agent.id", "gen_ai.agent.name"],
    memory: ["gen_ai.memory.store.id"],
    thread: ["gen_ai.conversation.id", "session.id"],
    user: ["user.id", "enduser.id"],
    tool: ["gen_ai.tool.name"],
    tool_call_id: ["gen_ai.tool.call.id"],
    request_model: ["gen_ai.request.model"],
    response_model: ["gen_ai.response.model"],
    provider: ["gen_ai.provider.name", "gen_ai.system"],
    input_tokens: ["gen_ai.usage.input_tokens"],
    output_tokens: ["gen_ai.usage.output_tokens"],
    finish_reasons: ["gen_ai.response.finish_reasons"],
  },
  content: [
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.retrieval.query.text",
    "gen_ai.retrieval.documents",
    "gen_ai.memory.query.text",
    "gen_ai.memory.records",
    "gen_ai.memory.record.content",
    "gen_ai.memory.content",
    "gen_ai.evaluation.explanation",
    // Deprecated names older instrumentations still send.
    "gen_ai.prompt",
    "gen_ai.completion",
  ],
  contentPatterns: [/^gen_ai\.(prompt|completion)\.\d+\./],
  withheld: [],
};
