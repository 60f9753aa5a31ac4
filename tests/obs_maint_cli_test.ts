import assert from "node:assert/strict";
import { captureIo, withTempDir } from "./_helpers.ts";
import { main } from "../cli.ts";
import { openDb } from "../lib/db.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";

const OLD = "2020-01-01T00:00:00Z";

/** Runs `trace obs …` through the real entry point; returns exit code and stderr. */
async function trace(args: string[]) {
  const io = captureIo();
  const code = await main(["obs", ...args], io);
  return { code, out: io.stdout(), err: io.stderr() };
}

const ONE_EVENT = [{
  event_id: "e1",
  application_id: "app1",
  agent_id: "agent-1",
  kind: "retrieval",
}];

/** A data dir (`folder` in a temp dir) holding `events`, received at `receivedAt` (default OLD). */
async function withData<T>(
  fn: (dataDir: string, dir: string) => Promise<T>,
  options: {
    folder?: string;
    events?: Parameters<typeof ingestEvents>[1];
    receivedAt?: string;
  } = {},
): Promise<T> {
  return await withTempDir(async (dir) => {
    const dataDir = `${dir}/${options.folder ?? "data"}`;
    assert.equal((await trace(["init", "--data-dir", dataDir])).code, 0);
    const db = await openDb({ dataDir });
    try {
      const at = Date.parse(options.receivedAt ?? OLD);
      await ingestEvents(db, options.events ?? ONE_EVENT, { now: () => at });
    } finally {
      db.close();
    }
    return await fn(dataDir, dir);
  });
}

Deno.test("obs retention takes a negative day count as a value and says what is allowed", async () => {
  await withData(async (dataDir) => {
    await refusedDays(dataDir, ["--previews-days", "--metadata-days"], "-1");
    const size = await trace(["retention", "--batch-size", "0"]);
    assert.equal(
      size.err,
      'trace obs retention: --batch-size must be a whole number ≥ 1, got "0"\n',
    );
  });
});

Deno.test("obs retention says how many envelopes lose the digest of their removed preview", async () => {
  await withData(async (dataDir) => {
    const plan = await trace(["retention", "--data-dir", dataDir]);
    assert.match(
      plan.out,
      /would delete: 1 preview, .*; 1 envelope would keep only the size of its removed preview, no digest of it\n/,
    );
    const applied = await trace([
      "retention",
      "--apply",
      "--data-dir",
      dataDir,
    ]);
    assert.equal(applied.code, 0, applied.err);
    assert.match(
      applied.out,
      /deleted: 1 preview, .*; 1 envelope keeps only the size of its removed preview, no digest of it\n/,
    );
  }, {
    events: [{ ...ONE_EVENT[0]!, event_id: "p1", preview: "an old answer" }],
  });
});

Deno.test("obs expiry-plan refuses to overwrite a file with a one-line message", async () => {
  await withData(async (dataDir, dir) => {
    const out = `${dir}/plan.json`;
    await Deno.writeTextFile(out, "keep me");
    const { code, err } = await trace([
      "expiry-plan",
      "--older-than",
      "2021-01-01T00:00:00Z",
      "--out",
      out,
      "--data-dir",
      dataDir,
    ]);
    assert.equal(code, 2);
    assert.equal(
      err,
      `trace obs expiry-plan: Cannot write the plan to ${out}: the file already exists; choose a new path\n`,
    );
    assert.equal(await Deno.readTextFile(out), "keep me");
    const missingDir = await trace([
      "expiry-plan",
      "--older-than",
      "2021-01-01T00:00:00Z",
      "--out",
      `${dir}/nowhere/plan.json`,
      "--data-dir",
      dataDir,
    ]);
    assert.match(
      missingDir.err,
      /^trace obs expiry-plan: Cannot write the plan to .*: its directory does not exist; create it or choose another path\n$/,
    );
  });
});

Deno.test("obs expiry-apply explains an unreadable plan without the OS error text", async () => {
  await withData(async (dataDir, dir) => {
    const base = ["--confirm", "x", "--archive-dir", `${dir}/archive`];
    const missing = await trace([
      "expiry-apply",
      "--plan",
      `${dir}/none.json`,
      ...base,
      "--data-dir",
      dataDir,
    ]);
    assert.equal(
      missing.err,
      `trace obs expiry-apply: Cannot read the plan ${dir}/none.json: no such file; check the path\n`,
    );
    await Deno.writeTextFile(`${dir}/bad.json`, "{");
    const bad = await trace([
      "expiry-apply",
      "--plan",
      `${dir}/bad.json`,
      ...base,
      "--data-dir",
      dataDir,
    ]);
    assert.match(
      bad.err,
      /^trace obs expiry-apply: Cannot read the plan .*: it is not JSON \(line 1, column 2: expected a string key\);/,
    );
    for (const err of [missing.err, bad.err]) {
      assert.doesNotMatch(err, /os error|obs: obs|\n./);
    }
  });
});

Deno.test("obs prefixes its messages once", async () => {
  const unknown = await trace(["nope"]);
  assert.equal(
    unknown.err,
    'trace obs: unknown command "nope"; run trace obs --help for the list\n',
  );
  const required = await trace(["expiry-plan"]);
  assert.equal(
    required.err,
    "trace obs expiry-plan: --older-than TIME is required; see trace obs expiry-plan --help\n",
  );
});

Deno.test("obs expiry-apply names an archive directory it cannot write", async () => {
  await withData(async (dataDir, dir) => {
    const plan = await writtenPlan(dataDir, dir);
    const blocker = `${dir}/not-a-dir`;
    await Deno.writeTextFile(blocker, "");
    const { code, err } = await trace([
      "expiry-apply",
      "--plan",
      plan.path,
      "--confirm",
      plan.confirmation,
      "--archive-dir",
      blocker,
      "--data-dir",
      dataDir,
    ]);
    assert.equal(code, 2);
    assert.match(
      err,
      /^trace obs expiry-apply: Cannot write the archive in .*not-a-dir: it is not a directory; choose a directory\n$/,
    );
  });
});

/** Splits a printed command line into words as a POSIX shell would (quotes only). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/(?:'[^']*'|"[^"]*"|[^\s'"]+)+/g)) {
    words.push(
      match[0].replace(/'([^']*)'|"([^"]*)"/g, (_, a, b) => a ?? b),
    );
  }
  return words;
}

Deno.test("obs expiry-plan prints an apply command that runs as printed against the same data", async () => {
  await withData(async (dataDir, dir) => {
    const planned = await trace([
      "expiry-plan",
      "--older-than",
      "2021-01-01T00:00:00Z",
      "--out",
      `${dir}/my plan.json`,
      "--data-dir",
      dataDir,
    ]);
    assert.equal(planned.code, 0);
    const line = planned.err.split("\n").find((l) => l.includes("trace obs"));
    assert.ok(line, planned.err);
    const words = shellWords(line.slice(line.indexOf("trace obs")))
      .map((word) => word === "DIR" ? `${dir}/archive` : word);
    assert.deepEqual(words.slice(0, 2), ["trace", "obs"]);
    const applied = await trace(words.slice(2));
    assert.equal(applied.code, 0, applied.err);
    assert.match(
      applied.out,
      /^Source expiry applied: 1 of 1 envelopes deleted/,
    );
  }, { folder: "my data" });
});

Deno.test("obs expiry-plan says when nothing is old enough, and an empty plan applies as nothing to do", async () => {
  await withData(async (dataDir, dir) => {
    const out = `${dir}/plan.json`;
    const planned = await trace([
      "expiry-plan",
      "--older-than",
      "2019-01-01T00:00:00Z",
      "--out",
      out,
      "--data-dir",
      dataDir,
    ]);
    assert.equal(planned.code, 0);
    assert.equal(
      planned.err,
      `No envelope was received before 2019-01-01T00:00:00.000Z: the plan written to ${out} lists none, nothing to apply\n`,
    );
    const plan = JSON.parse(await Deno.readTextFile(out));
    const applied = await trace([
      "expiry-apply",
      "--plan",
      out,
      "--confirm",
      plan.confirmation,
      "--archive-dir",
      `${dir}/archive`,
      "--data-dir",
      dataDir,
    ]);
    assert.equal(applied.code, 0, applied.out);
    assert.match(
      applied.out,
      /^Source expiry applied: 0 of 0 envelopes deleted/,
    );
  });
});

Deno.test("obs propagation refuses --application without a setting instead of listing every application", async () => {
  await withData(async (dataDir) => {
    const { code, out, err } = await trace([
      "propagation",
      "--application",
      "app1",
      "--data-dir",
      dataDir,
    ]);
    assert.equal(code, 2);
    assert.equal(out, "");
    assert.equal(
      err,
      "trace obs propagation: --application needs one of --on, --off or --default; leave it out to list every setting\n",
    );
  });
});

Deno.test("obs backfill prints its next page as a command that runs as printed, with the same filters and data", async () => {
  await withTempDir(async (dir) => {
    const dataDir = `${dir}/my data`;
    assert.equal((await trace(["init", "--data-dir", dataDir])).code, 0);
    const db = await openDb({ dataDir });
    try {
      await ingestEvents(
        db,
        ["a", "b", "c"].map((id) => ({
          event_id: id,
          application_id: id === "b" ? "other" : "app1",
          agent_id: "agent-1",
          kind: "retrieval",
        })),
      );
    } finally {
      db.close();
    }
    const first = await trace([
      "backfill",
      "--page-size",
      "1",
      "--application-id",
      "app1",
      "--data-dir",
      dataDir,
    ]);
    assert.equal(first.code, 0, first.err);
    const line = first.out.split("\n").find((l) => l.startsWith("Next page:"));
    assert.ok(line, first.out);
    const words = shellWords(line.slice("Next page: ".length));
    assert.deepEqual(words.slice(0, 3), ["trace", "obs", "backfill"]);
    const next = await trace(words.slice(2));
    assert.equal(next.code, 0, next.err);
    assert.match(next.out, /^Backfill dry run: 1 envelopes scanned/);
    assert.doesNotMatch(next.out, /Next page/);
  });
});

Deno.test("obs expiry-plan refuses a cutoff that is no zoned ISO 8601 time instead of reading it as another date", async (t) => {
  await withData(async (dataDir, dir) => {
    for (
      const [value, why] of [
        ["0", "use"],
        ["-1", "use"],
        ["2026-11-01", "use"],
        ["2026-11-01T00:00:00", "use"],
        [
          "2026-02-30T00:00:00Z",
          "must be a real date and time (no February 30",
        ],
      ]
    ) {
      await t.step(value!, async () => {
        const out = `${dir}/plan-${value}.json`;
        const { code, err } = await trace([
          "expiry-plan",
          "--older-than",
          value!,
          "--out",
          out,
          "--data-dir",
          dataDir,
        ]);
        assert.equal(code, 2, err);
        assert.ok(
          err.startsWith(
            `trace obs expiry-plan: Invalid expiry cutoff "${value}": ${why}`,
          ),
          err,
        );
        assert.ok(
          err.endsWith(
            "use an ISO 8601 timestamp with a zone such as 2026-08-01T00:00:00Z\n",
          ),
          err,
        );
        await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
      });
    }
  });
});

Deno.test("obs health names the parity command to run with the same data directory", async () => {
  await withData(async (dataDir) => {
    const health = await trace([
      "health",
      "--samples",
      "1",
      "--data-dir",
      dataDir,
    ]);
    const line = health.out.split("\n").find((l) =>
      l.startsWith("Parity (all tenants)")
    );
    assert.equal(
      line,
      `Parity (all tenants): unknown; run trace obs parity --data-dir '${dataDir}'`,
    );
    const words = shellWords(line!.slice(line!.indexOf("trace obs")));
    assert.equal((await trace(words.slice(2))).code, 0);
    const after = await trace([
      "health",
      "--samples",
      "1",
      "--data-dir",
      dataDir,
    ]);
    assert.match(after.out, /^Parity \(all tenants\): ok at /m);
  }, { folder: "my data", receivedAt: new Date().toISOString() });
});

Deno.test("obs retention --vacuum without --apply says the rewrite did not run either", async () => {
  await withData(async (dataDir) => {
    const { code, out } = await trace([
      "retention",
      "--vacuum",
      "--data-dir",
      dataDir,
    ]);
    assert.equal(code, 0);
    assert.match(
      out,
      /\nNothing was deleted and nothing vacuumed; add --apply to delete, then vacuum\n$/,
    );
  });
});

Deno.test("obs expiry-apply stops between batches on a first Ctrl-C, says what it did and exits 2", async () => {
  const events = ["e1", "e2", "e3"].map((id) => ({
    ...ONE_EVENT[0]!,
    event_id: id,
  }));
  await withData(async (dataDir, dir) => {
    const data = ["--data-dir", dataDir];
    const plan = await writtenPlan(dataDir, dir);
    const apply = [
      "expiry-apply",
      "--plan",
      plan.path,
      "--confirm",
      plan.confirmation,
      "--archive-dir",
      `${dir}/archive`,
      "--batch-size",
      "1",
      ...data,
    ];
    // Ctrl-C lands from the third look on: after the archive and one batch.
    let looks = 0;
    const interrupted = {
      get aborted() {
        return ++looks > 2;
      },
    } as AbortSignal;
    const io = { ...captureIo(), interrupted };
    const code = await main(["obs", ...apply], io);
    assert.equal(code, 2, io.stderr());
    assert.match(
      io.stdout(),
      /^Source expiry partial: 1 of 3 envelopes deleted/,
    );
    assert.match(
      io.stderr(),
      /trace obs expiry-apply: interrupted between batches, each committed: 3 of 3 envelopes archived, 1 envelope deleted; apply the same plan again to delete the rest/,
    );
    const again = await trace(apply);
    assert.equal(
      again.code,
      0,
      "the envelopes deleted before are counted, not refused",
    );
    assert.match(
      again.out,
      /^Source expiry applied: 2 of 3 envelopes deleted \(1 deleted before, as planned\), 0 refused/,
    );
  }, { events });
});

Deno.test("obs parity --application-id says when the index holds no event of that application", async () => {
  await withData(async (dataDir) => {
    const data = ["--data-dir", dataDir];
    const absent = await trace(["parity", "--application-id", "app9", ...data]);
    assert.equal(absent.code, 0);
    assert.match(
      absent.out,
      /\nNo event of application app9 is in the index: nothing was compared and nothing recorded for trace obs health; check the application id\n$/,
    );
    const json = await trace([
      "parity",
      "--application-id",
      "app9",
      "--json",
      ...data,
    ]);
    assert.equal(JSON.parse(json.out).nothing_checked, true);
    assert.match(json.err, /^No event of application app9 is in the index/);
    const present = await trace([
      "parity",
      "--application-id",
      "app1",
      ...data,
    ]);
    assert.doesNotMatch(present.out, /No event/);
    const health = await trace(["health", "--json", ...data]);
    assert.deepEqual(
      JSON.parse(health.out).parity_by_tenant.map(
        (p: { application_id: string }) => p.application_id,
      ),
      ["app1"],
    );
  });
});

Deno.test("obs retention names the accepted range of days for a count too large", async () => {
  await withData(async (dataDir) => {
    await refusedDays(
      dataDir,
      ["--previews-days", "--metadata-days", "--outcomes-days"],
      "36501",
    );
  });
});

/** Checks that each of `flags` set to `days` is refused with the accepted range. */
async function refusedDays(
  dataDir: string,
  flags: readonly string[],
  days: string,
): Promise<void> {
  for (const flag of flags) {
    const { code, err } = await trace([
      "retention",
      flag,
      days,
      "--data-dir",
      dataDir,
    ]);
    assert.equal(code, 2);
    assert.equal(
      err,
      `trace obs retention: ${flag} must be a whole number of days from 0 to 36500, got "${days}"\n`,
    );
  }
}

Deno.test("obs parity, backfill and expiry-plan refuse an --application (or --application-id) ingest would refuse", async () => {
  await withData(async (dataDir) => {
    for (
      const command of [
        ["parity"],
        ["backfill"],
        ["expiry-plan", "--older-than", "2021-01-01T00:00:00Z"],
      ]
    ) {
      const { code, out, err } = await trace([
        ...command,
        "--application-id",
        "app\u001b[2Jx",
        "--data-dir",
        dataDir,
      ]);
      assert.equal(code, 2, err);
      assert.equal(out, "");
      assert.equal(
        err,
        `trace obs ${
          command[0]
        }: --application must not contain control, line separator or bidirectional formatting characters\n`,
      );
    }
  });
});

Deno.test("obs expiry-apply with an empty --confirm says it is empty and what it must be", async () => {
  await withData(async (dataDir, dir) => {
    const plan = await writtenPlan(dataDir, dir);
    const { code, err } = await trace([
      "expiry-apply",
      "--plan",
      plan.path,
      "--confirm",
      "",
      "--archive-dir",
      `${dir}/archive`,
      "--data-dir",
      dataDir,
    ]);
    assert.equal(code, 2);
    assert.equal(
      err,
      `trace obs expiry-apply: Cannot apply the expiry plan: the confirmation given is empty; pass the plan's confirmation exactly: "${plan.confirmation}"\n`,
    );
    await assert.rejects(Deno.stat(`${dir}/archive`), Deno.errors.NotFound);
  });
});

/** Writes a plan of the old events in `dataDir` to `dir`/plan.json; returns its path and confirmation. */
async function writtenPlan(dataDir: string, dir: string) {
  const path = `${dir}/plan.json`;
  const planned = await trace([
    "expiry-plan",
    "--older-than",
    "2021-01-01T00:00:00Z",
    "--out",
    path,
    "--data-dir",
    dataDir,
  ]);
  assert.equal(planned.code, 0, planned.err);
  const plan = JSON.parse(await Deno.readTextFile(path));
  return {
    path,
    confirmation: String(plan.confirmation),
    label: String(plan.fingerprint).slice(0, 16),
  };
}

/**
 * A separate process that claims the plan's archives in `archiveDir` the way
 * expiry-apply does, leaves a `.partial` file as a write cut short would, and
 * waits to be killed.
 */
async function holdingProcess(archiveDir: string, label: string) {
  const claim = new URL("../lib/obs/maint/archive.ts", import.meta.url).href;
  const script = `
    const { claimArchive } = await import(${JSON.stringify(claim)});
    const dir = ${JSON.stringify(archiveDir)};
    const label = ${JSON.stringify(label)};
    await claimArchive(dir, label);
    await Deno.writeTextFile(dir + "/.expiry-" + label + "-2026-12-01T183527249Z.ndjson." + crypto.randomUUID() + ".partial", "{");
    console.log("held");
    setInterval(() => {}, 60_000);
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!said.includes("held")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the holding process ended: ${said}`);
    said += value;
  }
  return { child, reader };
}

Deno.test("obs expiry-apply refuses a second apply of the same plan at once, and one killed with -9 neither blocks nor leaves its partial archive", async () => {
  await withData(async (dataDir, dir) => {
    const plan = await writtenPlan(dataDir, dir);
    const archiveDir = `${dir}/archive`;
    const apply = () =>
      trace([
        "expiry-apply",
        "--plan",
        plan.path,
        "--confirm",
        plan.confirmation,
        "--archive-dir",
        archiveDir,
        "--data-dir",
        dataDir,
      ]);
    const { child, reader } = await holdingProcess(archiveDir, plan.label);
    try {
      const second = await apply();
      assert.equal(second.code, 2);
      assert.equal(
        second.err,
        `trace obs expiry-apply: Cannot apply the expiry plan: another apply of this plan is running (it holds ${archiveDir}/.expiry-${plan.label}.lock); wait for it to finish, then apply again if it did not finish the plan\n`,
      );
    } finally {
      child.kill("SIGKILL");
      await child.status;
      await reader.cancel();
    }
    const after = await apply();
    assert.equal(after.code, 0, after.err);
    assert.match(after.out, /^Source expiry applied: 1 of 1 envelopes deleted/);
    assert.match(
      after.err,
      /^Removed 1 unfinished archive of this plan that a stopped apply left in .*\/archive\nArchived 1 envelopes to /,
    );
    const names = [];
    for await (const entry of Deno.readDir(archiveDir)) names.push(entry.name);
    assert.equal(names.length, 1, names.join(", "));
    assert.match(names[0]!, new RegExp(`^expiry-${plan.label}-.*\\.ndjson$`));
  });
});
