/**
 * The shape of one tool: a name, words for the assistant, a valibot schema
 * of its arguments (the one the tool validates with and the one its JSON
 * Schema is generated from), truthful annotations, and what it does.
 *
 * @module
 */

import * as v from "valibot";
import { UsageError } from "../errors.ts";
import { describeIssues } from "../issues.ts";
import type { McpToolContext } from "./context.ts";

/** Side effects a tool declares (MCP tool annotations). */
export interface ToolEffects {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Reads the ledger, checkpoints or index; changes nothing anywhere. */
export const READS: ToolEffects = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** Appends to the local ledger only; calling again with the same arguments changes nothing more. */
export const LEDGER_WRITE: ToolEffects = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** Appends new rows to the local ledger on every call (in-process systems, no network). */
export const LEDGER_APPEND: ToolEffects = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

/**
 * Reaches a staging application over the network, writes synthetic records
 * into it and deletes them again (and appends the run to the local ledger).
 */
export const TARGET_RUN: ToolEffects = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

/** A tool with its argument type erased, ready to be listed and called. */
export interface TraceTool {
  name: string;
  title: string;
  description: string;
  /** A strict object schema: unknown arguments are refused. */
  input: v.GenericSchema;
  annotations: ToolEffects;
  /** Validates `args`, then runs the tool; the answer is a JSON object. */
  call(args: unknown, context: McpToolContext): Promise<object>;
}

/** What {@link defineTool} takes. */
export interface ToolSpec<S extends v.GenericSchema> {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations: ToolEffects;
  run(args: v.InferOutput<S>, context: McpToolContext): Promise<object>;
}

/** Builds a tool whose arguments are validated by `spec.input` before `spec.run` sees them. */
export function defineTool<S extends v.GenericSchema>(
  spec: ToolSpec<S>,
): TraceTool {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    input: spec.input,
    annotations: spec.annotations,
    call: async (args, context) => {
      const parsed = v.safeParse(spec.input, args ?? {});
      if (!parsed.success) {
        throw new UsageError(
          `Invalid arguments for ${spec.name}: ${
            describeIssues(parsed.issues)
          }`,
        );
      }
      return await spec.run(parsed.output, context);
    },
  };
}
