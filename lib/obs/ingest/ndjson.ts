/** NDJSON batches: one event per line, blank lines ignored, any bad line refuses the batch. */

import { IngestBatchError } from "./ingest.ts";
import type { EventIssue } from "../normalize.ts";

/** The events of an NDJSON text and the 1-based line each came from. */
export interface NdjsonEvents {
  events: unknown[];
  /** `lines[i]` is the source line of `events[i]`; pass it to ingest as `lines`. */
  lines: number[];
}

/** Parses NDJSON text; throws {@link IngestBatchError} naming every bad line. */
export function parseNdjsonEvents(text: string): NdjsonEvents {
  const events: unknown[] = [];
  const lines: number[] = [];
  const issues: EventIssue[] = [];
  text.split("\n").forEach((source, lineIndex) => {
    if (source.trim() === "") return;
    const line = lineIndex + 1;
    const index = events.length + issues.length;
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch {
      // The parser's own message quotes the line; report only where it is.
      issues.push({
        index,
        line,
        field: "(root)",
        message: "is not valid JSON",
      });
      return;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      issues.push({
        index,
        line,
        field: "(root)",
        message: "must be a JSON object",
      });
      return;
    }
    events.push(value);
    lines.push(line);
  });
  if (issues.length > 0) {
    throw new IngestBatchError(issues, events.length + issues.length);
  }
  return { events, lines };
}
