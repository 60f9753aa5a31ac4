import assert from "node:assert/strict";
import { join } from "node:path";
import { loadCommand, main } from "../cli.ts";
import type { CliIo } from "../cli/_io.ts";
import { referenceSubcommand, type Subcommand } from "../cli/reference.ts";
import { migrate, openDb } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { REFERENCE_SYSTEMS } from "../lib/reference/systems.ts";
import {
  referenceDashboard,
  referenceRanking,
  referenceRunView,
} from "../lib/runs/mod.ts";
import { renderMatrix } from "../cli/_matrix.ts";
import { captureIo, withTempDir } from "./_helpers.ts";

/** `trace reference SUB …` with errors thrown, as the dispatcher loads it. */
async function reference(args: string[], io: CliIo): Promise<number> {
  const loaded = await loadCommand(["reference", ...args]);
  return await loaded.command(loaded.args, io);
}

Deno.test("reference run records every system as a reference run and prints the matrix", async () => {
  await withTempDir(async (dir) => {
    const io = captureIo();
    const code = await reference(["run", "--data-dir", dir], io);
    assert.equal(code, 0, io.stderr());
    assert.match(
      io.stdout(),
      /^system\s+observed\s+source\s+vector\s+cache\s+marker\s+control\s+cleanup\n/,
    );
    const widest = Math.max(...io.stdout().split("\n").map((l) => l.length));
    assert.ok(widest <= 100, `the matrix is ${widest} columns wide`);
    assert.match(
      io.stdout(),
      /inventory-first-page \(!\)\s+PASS \(blind spot\)/,
    );
    assert.match(
      io.stdout(),
      /\(!\) inventory-first-page: blind spot, not a guarantee/,
    );
    assert.match(
      io.stdout(),
      new RegExp(
        `\nAs expected: each of the ${REFERENCE_SYSTEMS.length} systems landed on its expected outcome\\.\n$`,
      ),
    );
    const db = await openDb({ dataDir: dir });
    try {
      const kinds = await db.client.execute(
        "SELECT kind, COUNT(*) AS n FROM ledger_entries GROUP BY kind",
      );
      assert.deepEqual(
        kinds.rows.map((r) => [String(r.kind), Number(r.n)]),
        [["reference_run", REFERENCE_SYSTEMS.length]],
      );
      const roots = await db.client.execute(
        "SELECT COUNT(DISTINCT root_trace_id) AS n FROM obs_events WHERE kind = 'run'",
      );
      assert.equal(Number(roots.rows[0]!.n), REFERENCE_SYSTEMS.length);
    } finally {
      db.close();
    }

    const dash = captureIo();
    assert.equal(
      await reference(["dashboard", "--json", "--data-dir", dir], dash),
      0,
    );
    const board = JSON.parse(dash.stdout());
    assert.equal(board.rows.length, REFERENCE_SYSTEMS.length);
    assert.equal(board.mismatches, 0);
    assert.deepEqual(board.missing, []);

    const rank = captureIo();
    assert.equal(await reference(["ranking", "--data-dir", dir], rank), 0);
    assert.match(rank.stdout(), /^Ranked by deletion guarantee: /);
    assert.match(rank.stdout(), /1\s+correct\s+immediate erasure/);

    const runId = board.rows[1].run_id;
    const text = captureIo();
    await reference(["dashboard", "--data-dir", dir], text);
    assert.match(text.stdout(), /^system\s+observed.*\s+cleanup\n/);
    assert.match(
      text.stdout(),
      /\nstale-cache\s+FAIL\s+0\.00 s\s+0\.00 s\s+LEFT\s+LEFT\s+intact\s+NOT DONE\n/,
    );
    assert.match(
      text.stdout(),
      /\ninterrupted-window\s+INCONCLUSIVE\s+cut\s+cut\s+cut\s+cut\s+intact\s+done\n/,
    );
    // The legend agrees with reference show: a discarded system leaves nothing.
    const legend = text.stdout().replaceAll("\n", " ");
    assert.doesNotMatch(legend, /may remain/);
    assert.match(
      legend,
      /Cleanup NOT DONE: .* the system was discarded after its run, so nothing is left to remove\./,
    );
    assert.ok(
      text.stdout().split("\n").every((line) => line.length <= 100),
      text.stdout(),
    );
    for (const wanted of [runId, "stale-cache"]) {
      const shown = captureIo();
      assert.equal(
        await reference(["show", wanted, "--data-dir", dir], shown),
        0,
      );
      assert.match(
        shown.stdout(),
        /^Reference system stale-cache: observed FAIL, expected FAIL \(as expected\)/,
      );
      assert.match(shown.stdout(), new RegExp(`FAIL  ${runId}`));
      // Reference runs speak of virtual time and of no URL or staging tools.
      assert.match(
        shown.stdout(),
        /a reference system run in process on virtual time/,
      );
      assert.match(shown.stdout(), /s of virtual time, /);
      assert.match(shown.stdout(), /nothing is left to remove/);
      assert.doesNotMatch(shown.stdout(), /staging tools|http:\/\//);
    }
    // external-show names the system as reference show takes it, not its target id.
    const viewed = captureIo();
    assert.equal(
      await main(["external-show", runId, "--json", "--data-dir", dir], viewed),
      1,
    );
    assert.equal(
      JSON.parse(viewed.stdout()).note,
      `a reference run of system stale-cache; see trace reference show ${runId}`,
    );
    const compare = captureIo();
    assert.equal(
      await main(
        ["external-compare", runId, runId, "--data-dir", dir],
        compare,
      ),
      2,
    );
    assert.match(
      compare.stderr(),
      new RegExp(
        `Cannot compare run ${runId}: it is a reference run of system stale-cache, .*; see trace reference show ${runId}\n$`,
      ),
    );
  });
});

Deno.test("reference run exits 1 when a system lands off its expected outcome", async () => {
  await withTempDir(async (dir) => {
    const wrong = REFERENCE_SYSTEMS.map((spec) =>
      spec.name === "stale-cache"
        ? {
          ...spec,
          expected: {
            verdict: "PASS" as const,
            qualifier: "immediate" as const,
            findings: [],
          },
        }
        : spec
    );
    const io = captureIo();
    const run: Subcommand = "run";
    const code = await referenceSubcommand(run, wrong)(
      ["stale-cache", "correct", "--no-trace", "--data-dir", dir],
      io,
    );
    assert.equal(code, 1);
    assert.match(io.stderr(), /stale-cache FAIL MISMATCH \(expected PASS\)/);
    assert.match(io.stdout(), /\nstale-cache\s+FAIL \*\s/);
    assert.match(
      io.stdout(),
      /\n\* stale-cache: off its expected outcome: verdict FAIL, expected PASS/,
    );
    assert.match(
      io.stdout(),
      /\nNOT as expected: 1 of the \d+ systems? landed off its expected outcome \(marked \*\)\.\n$/,
    );
    assert.match(
      io.stderr(),
      /1 system\(s\) landed off their expected outcome/,
    );
  });
});

Deno.test("reference refuses unknown systems and subcommands, and missing runs", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      reference(["run", "nope", "--data-dir", dir], captureIo()),
      (error: Error) => {
        assert.match(
          error.message,
          /^Unknown system "nope"; valid systems: correct, stale-cache/,
          "cli.ts adds the command prefix; the message has none of its own",
        );
        return true;
      },
    );
    await assert.rejects(
      reference(["frobnicate"], captureIo()),
      /unknown command "frobnicate"; run trace reference --help/,
    );
    // A mistyped data directory: each reader names the ledger it looked for.
    const ledger = join(dir, "trace.db");
    // The printed command records where this one read: the same --data-dir.
    const noRuns =
      `No reference runs in the ledger at ${ledger} yet; run trace reference run --data-dir ${dir} first (check --data-dir / --db if runs were recorded elsewhere)`;
    for (const args of [["show", "run-missing"], ["dashboard"], ["ranking"]]) {
      await assert.rejects(
        reference([...args, "--data-dir", dir], captureIo()),
        (error: Error) => {
          assert.equal(error.message, noRuns, args.join(" "));
          return true;
        },
      );
    }
    const db = await openDb({ dataDir: dir });
    await migrate(db, ALL_MIGRATIONS);
    db.close();
    await assert.rejects(
      reference(["show", "run-missing", "--data-dir", dir], captureIo()),
      (error: Error) => {
        assert.equal(
          error.message,
          `Cannot show reference run "run-missing": it is neither a system with a stored run nor a run id in the reference history of the ledger at ${ledger}; see trace reference dashboard --data-dir ${dir}`,
        );
        return true;
      },
    );
    for (const sub of ["dashboard", "ranking"]) {
      const empty = captureIo();
      assert.equal(await reference([sub, "--data-dir", dir], empty), 0);
      assert.equal(empty.stdout(), `${noRuns}\n`, sub);
    }
  });
});

Deno.test("reference dashboard and ranking escape the hidden characters of the ledger path they name", async () => {
  await withTempDir(async (parent) => {
    const dir = join(parent, "data\u001b[31m\u202e");
    const db = await openDb({ dataDir: dir });
    await migrate(db, ALL_MIGRATIONS);
    db.close();
    const shown = join(parent, "data\\u{001b}[31m\\u{202e}", "trace.db");
    for (const sub of ["dashboard", "ranking"]) {
      const io = captureIo();
      assert.equal(await reference([sub, "--data-dir", dir], io), 0);
      assert.equal(
        io.stdout(),
        `No reference runs in the ledger at ${shown} yet; run trace reference run --data-dir $'${
          join(parent, "data\\u001b[31m\\u202e")
        }' first (check --data-dir / --db if runs were recorded elsewhere)\n`,
        sub,
      );
    }
  });
});

Deno.test("reference list and plan describe systems without running them", async () => {
  const io = captureIo();
  assert.equal(await reference(["list", "--json"], io), 0);
  const rows = JSON.parse(io.stdout());
  assert.equal(rows.length, REFERENCE_SYSTEMS.length);
  assert.equal(
    rows.find((r: { name: string }) => r.name === "inventory-first-page")
      .expected,
    "PASS (blind spot)",
  );
  const plan = captureIo();
  assert.equal(
    await reference(
      ["plan", "paginated-delete", "paginated-delete", "--json"],
      plan,
    ),
    0,
  );
  const entries = JSON.parse(plan.stdout());
  assert.equal(entries.length, 1, "a system named twice is planned once");
  const [entry] = entries;
  assert.equal(entry.plan.timing.document_count, 200);
  assert.equal(entry.plan.target.source, "reference");
});

Deno.test("reference <subcommand> --help prints that subcommand's own help", async () => {
  for (const sub of ["list", "plan", "run", "show", "dashboard", "ranking"]) {
    const io = captureIo();
    assert.equal(await reference([sub, "--help"], io), 0);
    assert.match(io.stdout(), new RegExp(`^Usage: trace reference ${sub} `));
  }
  const top = captureIo();
  assert.equal(await main(["reference", "--help"], top), 0);
  assert.match(top.stdout(), /Usage: trace reference <command>/);
  assert.match(top.stdout(), /known deletion behaviour/);
});

Deno.test("reference run stops between systems on Ctrl-C, records what ran and names the rest", async () => {
  await withTempDir(async (dir) => {
    const ctrlC = new AbortController();
    const captured = captureIo();
    // Ctrl-C arrives while the second system runs (its first progress line).
    let results = 0;
    let exitNote: string | null = null;
    const io: CliIo = {
      ...captured,
      err: (text) => {
        captured.err(text);
        if (text.startsWith("reference: ") && ++results === 1) ctrlC.abort();
      },
      interrupted: ctrlC.signal,
      setExitNote: (note) => void (exitNote = note),
    };
    const code = await reference(
      ["run", "correct", "stale-cache", "worker-resurrect", "--data-dir", dir],
      io,
    );
    assert.equal(code, 2, captured.stderr());
    // What a second Ctrl-C would print.
    assert.equal(
      exitNote,
      `the reference runs finished so far are recorded; trace reference dashboard --data-dir ${dir} shows them`,
    );
    assert.match(captured.stdout(), /^system\s+observed/);
    assert.match(captured.stdout(), /\ncorrect\s+PASS/);
    assert.doesNotMatch(captured.stdout(), /stale-cache|worker-resurrect/);
    assert.match(
      captured.stderr(),
      /reference: interrupted after 1 of 3 system\(s\); not run: stale-cache, worker-resurrect; run them with trace reference run stale-cache worker-resurrect --data-dir \S+\n/,
    );
    const board = captureIo();
    assert.equal(
      await reference(["dashboard", "--json", "--data-dir", dir], board),
      0,
    );
    const { rows } = JSON.parse(board.stdout());
    assert.deepEqual(rows.map((r: { system: string }) => r.system), [
      "correct",
    ]);

    const json = captureIo();
    const again = new AbortController();
    again.abort();
    assert.equal(
      await reference(["run", "correct", "--json", "--data-dir", dir], {
        ...json,
        interrupted: again.signal,
      }),
      2,
    );
    assert.deepEqual(JSON.parse(json.stdout()), {
      rows: [],
      mismatches: 0,
      trace_failures: 0,
      interrupted: true,
      not_run: ["correct"],
    });
  });
});

Deno.test("reference run, plan and show suggest the system a mistyped name is close to", async () => {
  await withTempDir(async (dir) => {
    for (const sub of ["run", "plan"]) {
      await assert.rejects(
        reference([sub, "stale-cahce", "--data-dir", dir], captureIo()),
        (error: Error) => {
          assert.match(
            error.message,
            /^Unknown system "stale-cahce"; did you mean "stale-cache"\? Valid systems: correct, /,
            sub,
          );
          return true;
        },
      );
    }
    const db = await openDb({ dataDir: dir });
    await migrate(db, ALL_MIGRATIONS);
    db.close();
    await assert.rejects(
      reference(["show", "corect", "--data-dir", dir], captureIo()),
      (error: Error) => {
        assert.match(
          error.message,
          /; did you mean "correct"\? Or see trace reference dashboard --data-dir \S+$/,
        );
        return true;
      },
    );
    // A known system without a run is not a typo.
    await assert.rejects(
      reference(["show", "correct", "--data-dir", dir], captureIo()),
      (error: Error) => {
        assert.doesNotMatch(error.message, /did you mean/);
        return true;
      },
    );
  });
});

Deno.test("reference commands repeat --data-dir in the commands they print", async () => {
  await withTempDir(async (parent) => {
    const dir = join(parent, "my data");
    const flags = `--data-dir '${dir}'`;
    assert.equal(
      await reference(["run", "correct", "--data-dir", dir], captureIo()),
      0,
    );
    const board = captureIo();
    assert.equal(await reference(["dashboard", "--data-dir", dir], board), 0);
    assert.ok(
      board.stdout().replaceAll("\n", " ").includes(
        `trace reference show SYSTEM ${flags}.`,
      ),
      board.stdout(),
    );
    assert.ok(
      board.stdout().includes(`; run trace reference run ${flags}\n`),
      board.stdout(),
    );
    const ranking = captureIo();
    assert.equal(await reference(["ranking", "--data-dir", dir], ranking), 0);
    assert.ok(
      ranking.stdout().includes(`; run trace reference run ${flags}\n`),
      ranking.stdout(),
    );
  });
});

Deno.test("reference subcommands other than run refuse --no-trace rather than ignore it", async () => {
  await withTempDir(async (dir) => {
    for (const sub of ["list", "plan", "show", "dashboard", "ranking"]) {
      const args = sub === "show" ? [sub, "correct"] : [sub];
      await assert.rejects(
        reference([...args, "--no-trace", "--data-dir", dir], captureIo()),
        (error: Error) => {
          assert.equal(
            error.message,
            `Unknown option '--no-trace'; see trace reference ${sub} --help`,
          );
          return true;
        },
      );
    }
  });
});

Deno.test("reference run --json and show --json carry the fields of their MCP twins", async () => {
  await withTempDir(async (dir) => {
    const ran = captureIo();
    assert.equal(
      await reference(["run", "correct", "--json", "--data-dir", dir], ran),
      0,
      ran.stderr(),
    );
    const matrix = JSON.parse(ran.stdout());
    // trace.reference_run answers {rows, mismatches, trace_failures}.
    assert.equal(matrix.trace_failures, 0);
    assert.equal(matrix.mismatches, 0);
    const runId = matrix.rows[0].run_id;

    const db = await openDb({ dataDir: dir });
    const view = await (async () => {
      try {
        return await referenceRunView(db, runId);
      } finally {
        db.close();
      }
    })();
    for (const wanted of ["correct", runId]) {
      const shown = captureIo();
      assert.equal(
        await reference(["show", wanted, "--json", "--data-dir", dir], shown),
        0,
      );
      // trace.reference_get answers referenceRunView(), field for field.
      assert.deepEqual(JSON.parse(shown.stdout()), view);
    }
  });
});

Deno.test("reference dashboard and ranking print what the shared reference views build", async () => {
  await withTempDir(async (dir) => {
    assert.equal(
      await reference(
        ["run", "correct", "stale-cache", "--data-dir", dir],
        captureIo(),
      ),
      0,
    );
    const db = await openDb({ dataDir: dir });
    let board, ranks;
    try {
      board = await referenceDashboard(db);
      ranks = await referenceRanking(db);
    } finally {
      db.close();
    }
    const out = async (args: string[]) => {
      const io = captureIo();
      assert.equal(await reference([...args, "--data-dir", dir], io), 0);
      return io.stdout();
    };
    assert.deepEqual(JSON.parse(await out(["dashboard", "--json"])), board);
    assert.deepEqual(JSON.parse(await out(["ranking", "--json"])), ranks);
    const flags = ` --data-dir ${dir}`;
    assert.equal(
      await out(["dashboard"]),
      renderMatrix(board.rows, flags) +
        `\nNo reference run yet for: ${
          board.missing.join(", ")
        }; run trace reference run${flags}\n`,
    );
    const ranking = await out(["ranking"]);
    assert.ok(ranking.startsWith(`${ranks.rule.slice(0, 40)}`), ranking);
    for (const row of ranks.ranking) {
      assert.match(
        ranking,
        new RegExp(`\\n\\s*${row.rank}\\s+${row.system}\\s`),
      );
    }
  });
});
