/**
 * The shape of one tool: a name, words for the assistant, a valibot schema
 * of its arguments (the one the tool validates with and the one its JSON
 * Schema is generated from), truthful annotations, and what it does.
 *
 * @module
 */

import * as v from "valibot";
import { UsageError } from "../errors.ts";
import { describeIssues, isFieldName } from "../issues.ts";
import { closestName } from "../suggest.ts";
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
            argumentProblem(parsed.issues, spec.input)
          }`,
        );
      }
      return await spec.run(parsed.output, context);
    },
  };
}

/**
 * The first problem of a call's arguments, an unknown one first: an
 * assistant that misnamed an argument (`target` for `target_id`) learns the
 * name it meant, rather than that the real one is missing.
 */
function argumentProblem(
  issues: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]],
  input: v.GenericSchema,
): string {
  const unknown = issues.find((issue) =>
    issue.expected === "never" && issue.path?.length === 1
  );
  if (!unknown) return describeIssues(issues);
  const key = String(unknown.path![0]!.key);
  const meant = isFieldName(key) ? meantArgument(key, input) : undefined;
  return meant === undefined
    ? describeIssues([unknown])
    : `${key}: unknown argument; did you mean ${meant}?`;
}

/** The argument `key` most likely stands for: a typo of one, or one it abbreviates (`target` for `target_id`). */
function meantArgument(
  key: string,
  input: v.GenericSchema,
): string | undefined {
  const entries = (input as { entries?: Record<string, unknown> }).entries;
  if (!entries) return undefined;
  const names = Object.keys(entries);
  const longer = names.filter((name) => name.startsWith(`${key}_`));
  return closestName(key, names) ??
    (longer.length === 1 ? longer[0] : undefined);
}
