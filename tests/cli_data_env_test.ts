/**
 * The variables that say where the data is: one set but empty (a CI
 * variable that did not expand) is refused in one line, as an empty
 * credential or switch is, rather than silently sending the data somewhere
 * else; an empty or relative `XDG_DATA_HOME` counts as unset, as the XDG
 * specification says.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveDataDir } from "../lib/data_dir.ts";
import {
  exists,
  runCli,
  SUPPORT_TURN_EVENTS,
  withTempDir,
} from "./_helpers.ts";

Deno.test("TRACE_DATA_DIR set but empty is refused in one line; nothing is written to the default directory", async () => {
  await withTempDir(async (home) => {
    const env = { HOME: home, TRACE_DATA_DIR: "" };
    for (
      const args of [
        ["events", "ingest", SUPPORT_TURN_EVENTS],
        ["external-runs"],
        ["obs", "init"],
      ]
    ) {
      const text = await runCli(args, env);
      assert.equal(text.code, 2, text.err);
      assert.equal(
        text.err.trim().split("\n").length,
        1,
        `one line: ${text.err}`,
      );
      assert.match(text.err, /TRACE_DATA_DIR is set but empty/);
      assert.match(text.err, /unset it/);
      const json = await runCli([...args, "--json"], env);
      assert.equal(json.code, 2);
      const answer = JSON.parse(json.out);
      const error = answer.error;
      assert.equal(error.code, "config_invalid", json.out);
      assert.match(error.message, /TRACE_DATA_DIR is set but empty/);
    }
    assert.equal(await exists(join(home, ".local")), false);
  });
});

Deno.test("--data-dir wins over an empty TRACE_DATA_DIR", async () => {
  await withTempDir(async (dir) => {
    const text = await runCli(
      ["events", "ingest", SUPPORT_TURN_EVENTS, "--data-dir", dir],
      { HOME: dir, TRACE_DATA_DIR: "" },
    );
    assert.equal(text.code, 0, text.err);
    assert.equal(await exists(join(dir, "trace.db")), true);
  });
});

Deno.test("TRACE_DB_URL set but empty is refused in one line, not read as a local database", async () => {
  await withTempDir(async (dir) => {
    const env = { HOME: dir, TRACE_DB_URL: "" };
    const text = await runCli(
      ["events", "ingest", SUPPORT_TURN_EVENTS, "--data-dir", dir],
      env,
    );
    assert.equal(text.code, 2, text.err);
    assert.match(text.err, /TRACE_DB_URL is set but empty/);
    assert.equal(text.err.trim().split("\n").length, 1, text.err);
    assert.equal(await exists(join(dir, "trace.db")), false);
  });
});

Deno.test({
  name:
    "an empty or relative XDG_DATA_HOME counts as unset: the data stays under HOME, not in the working directory",
  ignore: Deno.build.os !== "linux",
  fn() {
    for (const xdg of ["", "relative/dir"]) {
      const env: Record<string, string> = {
        HOME: "/home/u",
        XDG_DATA_HOME: xdg,
      };
      assert.equal(
        resolveDataDir({ env: (name) => env[name] }),
        "/home/u/.local/share/trace",
        `XDG_DATA_HOME=${JSON.stringify(xdg)}`,
      );
    }
    const set: Record<string, string> = {
      HOME: "/home/u",
      XDG_DATA_HOME: "/data",
    };
    assert.equal(
      resolveDataDir({ env: (name) => set[name] }),
      "/data/trace",
    );
  },
});
