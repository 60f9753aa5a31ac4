/**
 * Puts the tools on an SDK server, for any transport. The tools are
 * installed as the server's `tools/list` and `tools/call` handlers rather
 * than through `McpServer.registerTool`, because that takes zod schemas only
 * and ours are the valibot schemas the rest of Trace validates with: each
 * tool lists the JSON Schema generated from its valibot schema and validates
 * its arguments with that same schema. Every failure is a tool error with a
 * one-line message, its commands named as their tools where they have one;
 * unexpected ones are logged and answered generically.
 *
 * @module
 */

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { toJsonSchema } from "@valibot/to-json-schema";
import { errorMessage, TraceError } from "../errors.ts";
import { explainSqlite } from "../sqlite_errors.ts";
import { clientAnswer, remoteText } from "./_remote_text.ts";
import { toolAdvice } from "./_tool_advice.ts";
import { boundAnswer, outputBound } from "./_bound.ts";
import { serverInstructions } from "./_instructions.ts";
import type { TraceTool } from "./_tool.ts";
import { type McpToolContext, TRACE_QUERIES_ENV } from "./context.ts";
import { EXTERNAL_TOOLS } from "./external_tools.ts";
import { REFERENCE_TOOLS } from "./reference_tools.ts";
import { TRACE_TOOLS } from "./trace_tools.ts";

/** Name and version the server announces. */
export const SERVER_INFO = { name: "trace", version: "0.1.0" } as const;

const ALL_TOOLS: readonly TraceTool[] = [
  ...EXTERNAL_TOOLS,
  ...REFERENCE_TOOLS,
  ...TRACE_TOOLS,
];

/** Every tool name, in documentation order (`trace.query_traces` only when enabled). */
export const TOOL_NAMES: readonly string[] = ALL_TOOLS.map((tool) => tool.name);

/** The tools a context offers (those its policy refuses are left out). */
export function toolsFor(
  context: Pick<McpToolContext, "allowTraceQueries" | "refuseTool">,
): TraceTool[] {
  return [
    ...EXTERNAL_TOOLS,
    ...REFERENCE_TOOLS,
    ...(context.allowTraceQueries ? TRACE_TOOLS : []),
  ].filter((tool) => (context.refuseTool?.(tool) ?? null) === null);
}

const listings = new WeakMap<TraceTool, Tool>();

/** The `tools/list` entry of a tool; its input schema is generated from the valibot schema. */
export function toolListing(tool: TraceTool): Tool {
  let listing = listings.get(tool);
  if (!listing) {
    // Checks written as functions have no JSON Schema form; the tool still applies them.
    const inputSchema = toJsonSchema(tool.input, { errorMode: "ignore" });
    listing = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputSchema as Tool["inputSchema"],
      annotations: { title: tool.title, ...tool.annotations },
    };
    listings.set(tool, listing);
  }
  return listing;
}

function toolError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

function unknownTool(name: string): string {
  if (TRACE_TOOLS.some((tool) => tool.name === name)) {
    return `${name} is off on this server; start it with ${TRACE_QUERIES_ENV}=true to offer it`;
  }
  // A name that is no tool name may be anything pasted there: not repeated.
  const named = TOOL_NAME.test(name) ? ` ${JSON.stringify(name)}` : "";
  return `Unknown tool${named}; tools/list names the tools this server offers`;
}

/** What a tool name can look like (`trace.query_traces`). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Calls one tool and turns its answer or failure into a tool result. */
export async function callTool(
  tools: ReadonlyMap<string, TraceTool>,
  name: string,
  args: unknown,
  context: McpToolContext,
): Promise<CallToolResult> {
  const tool = tools.get(name);
  if (!tool) {
    const known = ALL_TOOLS.find((candidate) => candidate.name === name);
    const refusal = known ? context.refuseTool?.(known) : null;
    return toolError(refusal ?? unknownTool(name));
  }
  let answer: object;
  try {
    answer = await tool.call(args, context);
  } catch (thrown) {
    // SQLite's own failures (a write lock held too long) say what to do too.
    const error = explainSqlite(thrown);
    if (error instanceof TraceError) {
      const message = toolAdvice(errorMessage(error));
      return toolError(
        context.remote ? remoteText(message, context.dataDir) : message,
      );
    }
    context.log?.(`${name}: ${errorMessage(error)}`);
    return toolError(
      `${name} failed on an internal error; the server's log has the detail`,
    );
  }
  // Bound what the client receives: a remote rewrite can lengthen an answer
  // (the data directory's own path becomes words). A paging tool measures
  // its page the same way, so its answer fits here and is returned as it is.
  const bounded = boundAnswer(
    clientAnswer(answer, context),
    outputBound(context.maxOutputChars),
  );
  return {
    content: [{ type: "text", text: JSON.stringify(bounded) }],
    structuredContent: bounded as Record<string, unknown>,
  };
}

/**
 * Registers every tool `context` offers on `server`, before it connects.
 * The server's own `registerTool` cannot be used beside this (the tool
 * handlers are taken).
 */
export function registerTraceTools(
  server: McpServer,
  context: McpToolContext,
): void {
  const tools = toolsFor(context);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listed = tools.map(toolListing);
  server.server.registerCapabilities({ tools: { listChanged: false } });
  server.server.setRequestHandler(
    ListToolsRequestSchema,
    () => ({ tools: listed }),
  );
  server.server.setRequestHandler(
    CallToolRequestSchema,
    (request: CallToolRequest, extra: { requestId: string | number }) => {
      const call = () =>
        callTool(
          byName,
          request.params.name,
          request.params.arguments,
          context,
        );
      return context.calls
        ? context.calls.track(call, extra.requestId)
        : call();
    },
  );
}

/** A new SDK server with every tool of `context` registered, ready to connect to a transport. */
export function createTraceMcpServer(context: McpToolContext): McpServer {
  const server = new McpServer(SERVER_INFO, {
    instructions: serverInstructions(context),
  });
  registerTraceTools(server, context);
  return server;
}
