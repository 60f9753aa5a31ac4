/**
 * `TRACE_OBS_ERASURE_PROPAGATION` is a privacy opt-in: a value that is not
 * `true` or `false` (`1`, `yes`, set but empty) is refused in one line by
 * every command that reads it, before anything is written, rather than
 * silently leaving deletions unpropagated.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  exists,
  runCli,
  SUPPORT_TURN_EVENTS,
  withTempDir,
} from "./_helpers.ts";

/** `trace events ingest` of the README's fixture into `data`. */
const ingestFixture = (data: string[], env: Record<string, string>) =>
  runCli(["events", "ingest", SUPPORT_TURN_EVENTS, ...data], env);

Deno.test("events ingest and obs propagation refuse TRACE_OBS_ERASURE_PROPAGATION=1, yes or empty in one line, writing nothing", async () => {
  for (const value of ["1", "yes", ""]) {
    await withTempDir(async (dir) => {
      const env = { HOME: dir, TRACE_OBS_ERASURE_PROPAGATION: value };
      const data = ["--data-dir", join(dir, "data")];
      const ingest = await ingestFixture(data, env);
      assert.equal(ingest.code, 2, ingest.err);
      assert.equal(ingest.err.trim().split("\n").length, 1, ingest.err);
      assert.match(
        ingest.err,
        /TRACE_OBS_ERASURE_PROPAGATION (is set but empty|must be true or false)/,
      );
      assert.equal(await exists(join(dir, "data", "trace.db")), false);
      const json = await runCli(
        ["events", "ingest", SUPPORT_TURN_EVENTS, ...data, "--json"],
        env,
      );
      assert.equal(json.code, 2);
      assert.equal(JSON.parse(json.out).error.code, "config_invalid");

      const shown = await runCli(["obs", "propagation", ...data], env);
      assert.equal(shown.code, 2, shown.out);
      assert.match(shown.err, /TRACE_OBS_ERASURE_PROPAGATION/);
      assert.doesNotMatch(shown.out, /: off/);
    });
  }
});

Deno.test("TRACE_OBS_ERASURE_PROPAGATION=true or false, in any case, is read as before", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", dir];
    for (const [value, shown] of [["TRUE", "on"], ["false", "off"]]) {
      const env = { HOME: dir, TRACE_OBS_ERASURE_PROPAGATION: value! };
      const ingest = await ingestFixture(data, env);
      assert.equal(ingest.code, 0, ingest.err);
      const listed = await runCli(["obs", "propagation", ...data], env);
      assert.equal(listed.code, 0, listed.err);
      assert.match(listed.out, new RegExp(`in this environment\\): ${shown}`));
    }
  });
});
