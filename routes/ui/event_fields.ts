/**
 * The producer fields the trace pages show beside an event's kind: its
 * tool, the model it called and the tokens it counted (whichever convention
 * sent them: the OTLP mapping stores them under the GenAI names, read by
 * `modelUsage`), its user and its thread. The same fields as the
 * `trace events` text view, so a terminal and a browser name the same
 * things.
 *
 * @module
 */

import { modelUsage, type TraceEvent } from "../../lib/obs/mod.ts";

/** What an event's producer said about it, beyond ids and times. */
export interface MappedFields {
  kind: string;
  tool: string | null;
  /** The model that answered, else the one asked for. */
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  /** `null`: an anonymous user. */
  user_id: string | null;
  thread_id: string | null;
}

/** The mapped fields of one event, with the ids that name it (the finder's twin lists these). */
export interface EventFieldsRow extends MappedFields {
  application_id: string;
  event_id: string;
}

/** Reads the mapped fields of `event`. */
export function mappedFields(
  event: Pick<
    TraceEvent,
    "kind" | "tool" | "user_id" | "thread_id" | "attributes"
  >,
): MappedFields {
  const usage = modelUsage(event.attributes);
  return {
    kind: event.kind,
    tool: event.tool,
    model: usage.model,
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    user_id: event.user_id,
    thread_id: event.thread_id,
  };
}

/** `11 in / 7 out`, or `null` when the event counted no tokens. */
export function tokensText(fields: MappedFields): string | null {
  if (fields.input_tokens === null && fields.output_tokens === null) {
    return null;
  }
  const n = (value: number | null) =>
    value === null ? "–" : value.toLocaleString("en-US");
  return `${n(fields.input_tokens)} in / ${n(fields.output_tokens)} out`;
}

/** A user id in words: `anonymous` for `null`. */
export function userText(userId: string | null): string {
  return userId ?? "anonymous";
}

/** The one value every item shares, `undefined` when they differ or there are none. */
export function sharedValue<T>(values: readonly T[]): T | undefined {
  const [first] = values;
  if (values.length === 0) return undefined;
  return values.every((value) => value === first) ? first : undefined;
}

/** The key a finder event's fields are kept under. */
export function fieldsKey(applicationId: string, eventId: string): string {
  return `${applicationId}\u0000${eventId}`;
}
