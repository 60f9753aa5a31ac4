/**
 * The denial-of-service bodies: small gzipped requests that inflate to
 * millions of spans, lines or values. Each is posted in a process of its own
 * (`tests/_obs_dos.ts`) so its resident memory is its own; it must be refused
 * with 413 and cost well under 300 MB. How fast is measured by
 * `deno task bench:obs`, not here.
 */

import assert from "node:assert/strict";
import { DOS_BODIES } from "./_obs_dos.ts";

const MAX_RSS_GROWTH_MB = 300;

interface DosOutcome {
  status: number;
  code: string | null;
  rss_growth_mb: number;
}

async function postInChild(body: string): Promise<DosOutcome> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "tests/_obs_dos.ts", body],
    stdout: "piped",
    stderr: "piped",
    // A body that is decoded whole exhausts the heap after a long while: stop waiting.
    signal: AbortSignal.timeout(120_000),
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  assert.ok(
    output.success,
    `the child failed (${output.code}): ${
      new TextDecoder().decode(output.stderr).slice(-500)
    }`,
  );
  return JSON.parse(stdout) as DosOutcome;
}

for (const body of DOS_BODIES) {
  Deno.test(`a ${body} body of millions of items is refused with 413 and bounded memory`, async () => {
    const outcome = await postInChild(body);
    assert.equal(outcome.status, 413, JSON.stringify(outcome));
    if (body !== "otlp-protobuf") {
      assert.equal(outcome.code, "payload_too_large");
    }
    assert.ok(
      outcome.rss_growth_mb < MAX_RSS_GROWTH_MB,
      `resident memory grew by ${outcome.rss_growth_mb.toFixed(0)} MB`,
    );
  });
}
