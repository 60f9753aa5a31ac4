/**
 * The audited reveal of one event's content preview: which event an
 * operator named (agent, root and event id, inside their scope), refusing an
 * id that names more than one event, and the request's shape (a reason is
 * required, and may not carry an email address).
 *
 * @module
 */

import * as v from "valibot";
import type { TraceDb } from "../db.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import type { TraceEvent } from "../obs/mod.ts";
import { readEventsById, type TraceFilter } from "../obs/query/mod.ts";
import { OpaqueId, parseOperatorInput, Reason } from "./_input.ts";

/** The body of a reveal: which event, optionally narrowed, and why. */
export const RevealRequestSchema = v.strictObject({
  agent_id: OpaqueId,
  root_trace_id: OpaqueId,
  event_id: OpaqueId,
  turn_id: v.optional(OpaqueId),
  run_id: v.optional(OpaqueId),
  application_id: v.optional(OpaqueId),
  reason: Reason,
});
/** A validated reveal request. */
export type RevealRequest = v.InferOutput<typeof RevealRequestSchema>;

/** Validates a reveal body (form fields or JSON); messages never repeat a value. */
export function parseRevealRequest(input: unknown): RevealRequest {
  return parseOperatorInput(RevealRequestSchema, input, "reveal");
}

/**
 * The one event a reveal names inside `filter`'s scope. Throws
 * `NotFoundError` when there is none and `ConflictError` (409) when the id
 * names more than one, asking for a turn or run.
 */
export async function findRevealTarget(
  db: TraceDb,
  request: RevealRequest,
  scope: Pick<TraceFilter, "application_id" | "user_id">,
): Promise<TraceEvent> {
  // Two are enough to tell one event from several (of other applications).
  const { events: matches } = await readEventsById(db, request.event_id, {
    scope,
    place: {
      root_trace_id: request.root_trace_id,
      agent_id: request.agent_id,
      turn_id: request.turn_id,
      run_id: request.run_id,
    },
    limit: 2,
  });
  if (matches.length === 0) {
    throw new NotFoundError(
      "No event with this agent, root and event id is in your scope; check the ids on the inspection page",
    );
  }
  if (matches.length > 1) {
    throw new ConflictError(
      "This event id names more than one event in the root; give turn_id or run_id (or application_id) to choose one",
    );
  }
  return matches[0]!;
}
