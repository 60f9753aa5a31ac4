/** The words of a residual finding name the sample the data came back at. */

import assert from "node:assert/strict";
import { persistentMessage } from "../lib/runner/_residual_messages.ts";
import type { Sample } from "../lib/runner/report.ts";

function samplesAt(seconds: number[]): Sample[] {
  return seconds.map((s) => ({ started_at_seconds: s }) as Sample);
}

Deno.test("a comeback with an unread sample inside it is dated by its first sighting, not by the read after the gap", () => {
  const samples = samplesAt([0, 1, 2, 3]);
  assert.equal(
    persistentMessage(
      { subject: "cache_records", values: [0, 3, null, 3] },
      samples,
      samples[3]!,
    ),
    "cache_records read 0 at 0.00 s but came back at 1.00 s and was still there at the final sample at 3.00 s",
  );
});

Deno.test("an unread sample right after the clean read does not date the comeback", () => {
  const samples = samplesAt([0, 1, 2]);
  assert.equal(
    persistentMessage(
      { subject: "vector_records", values: [0, null, 2] },
      samples,
      samples[2]!,
    ),
    "vector_records read 0 at 0.00 s but came back at 2.00 s and was still there at the final sample at 2.00 s",
  );
});
