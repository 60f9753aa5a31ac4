/** NDJSON batches: one event per line, blank lines ignored, any bad line refuses the batch. */

import { IngestBatchError } from "./ingest.ts";
import type { EventIssue } from "./normalize.ts";

/** Parses NDJSON text into event values; throws {@link IngestBatchError} naming bad lines. */
export function parseNdjsonEvents(text: string): unknown[] {
  const events: unknown[] = [];
  const issues: EventIssue[] = [];
  const lines = text.split("\n");
  let index = 0;
  lines.forEach((line, lineIndex) => {
    if (line.trim() === "") return;
    try {
      events.push(JSON.parse(line));
    } catch {
      issues.push({
        index,
        field: "(root)",
        message: `line ${lineIndex + 1} is not valid JSON`,
      });
    }
    index += 1;
  });
  if (issues.length > 0) throw new IngestBatchError(issues, index);
  return events;
}
