/** What a client of `/mcp` over HTTP reads instead of the server's paths and shell advice. */

import assert from "node:assert/strict";
import { resolve } from "node:path";
import {
  remoteAnswer,
  remoteRewriter,
  remoteText,
} from "../lib/mcp/_remote_text.ts";

const MISSING =
  "Cannot find run run-1 in the ledger or among checkpoints in DIR; check --data-dir";

Deno.test("remoteText() names the data directory in words, keeps paths below it relative and drops --data-dir advice", () => {
  for (const dir of ["/srv/trace", "/srv/trace/"]) {
    assert.equal(
      remoteText(MISSING.replace("DIR", "/srv/trace"), dir),
      "Cannot find run run-1 in the ledger or among checkpoints in the server's data directory",
    );
    assert.equal(
      remoteText(
        "Checkpoint /srv/trace/external/run-1.json is not valid JSON",
        dir,
      ),
      "Checkpoint external/run-1.json is not valid JSON",
    );
  }
  assert.equal(
    remoteText(
      "No Trace data at /srv/trace/trace.db yet; check --data-dir / --db",
      "/srv/trace",
    ),
    "No Trace data at trace.db yet",
  );
});

Deno.test("remoteText() replaces whole paths only, whatever the directory is called", () => {
  const cwd = Deno.cwd();
  // A relative or one-letter directory touches no word that merely contains it.
  for (const dir of ["data", "d", "."]) {
    const absolute = resolve(dir);
    assert.equal(
      remoteText(`No Trace data at ${absolute}/trace.db yet: data stays`, dir),
      "No Trace data at trace.db yet: data stays",
      dir,
    );
  }
  assert.equal(
    remoteText("at /srv/trace-old/x and /srv/traces", "/srv/trace"),
    "at /srv/trace-old/x and /srv/traces",
  );
  assert.equal(
    remoteText(`in ${cwd}.`, "."),
    "in the server's data directory.",
  );
  // The root directory prefixes every path: nothing is replaced.
  assert.equal(remoteText("/etc/passwd", "/"), "/etc/passwd");
});

Deno.test("remoteRewriter() rewrites each text as remoteText() does, for one data directory", () => {
  const texts = [
    MISSING.replace("DIR", "/srv/trace"),
    "Checkpoint /srv/trace/external/run-1.json is not valid JSON",
    "at /srv/trace-old/x and /srv/traces; check --data-dir / --db",
  ];
  for (const dir of ["/srv/trace", "/"]) {
    const rewrite = remoteRewriter(dir);
    for (const text of texts) {
      assert.equal(rewrite(text), remoteText(text, dir), `${dir}: ${text}`);
    }
  }
});

Deno.test("remoteAnswer() applies to every string of an answer and leaves other values alone", () => {
  assert.deepEqual(
    remoteAnswer({
      run_id: "run-1",
      checkpoint: "/srv/trace/external/run-1.json",
      recording: { kept_in: "file", path: "/srv/trace/reports/run-1.json" },
      notes: ["kept in /srv/trace/reports; check --data-dir"],
      samples: 3,
      done: false,
      cleanup: null,
    }, "/srv/trace"),
    {
      run_id: "run-1",
      checkpoint: "external/run-1.json",
      recording: { kept_in: "file", path: "reports/run-1.json" },
      notes: ["kept in reports"],
      samples: 3,
      done: false,
      cleanup: null,
    },
  );
});
