import assert from "node:assert/strict";
import { exitCodeFor } from "../cli.ts";
import { externalRegister, externalTargets } from "../cli/targets.ts";
import { parseStagingConfig } from "../lib/contract/config.ts";
import { migrate } from "../lib/db.ts";
import { ConflictError, UsageError } from "../lib/errors.ts";
import { listEntries } from "../lib/ledger/chain.ts";
import {
  configDifferences,
  listTargets,
  registerTarget,
  validateTargetId,
} from "../lib/ledger/targets.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { captureIo, withDb, withTempDir } from "./_helpers.ts";

const BASE = {
  base_url: "https://staging.example.test/trace",
  environment: "staging",
  allow_synthetic_writes: true,
  token_env: "STAGING_TOKEN",
};

Deno.test("registerTarget() is a no-op for an identical config", async () => {
  await withDb(async (db) => {
    await migrate(db, ALL_MIGRATIONS);
    const config = parseStagingConfig(BASE);
    const first = await registerTarget(db, {
      targetId: "my-staging",
      config,
      source: "registered",
    });
    const second = await registerTarget(db, {
      targetId: "my-staging",
      config,
      source: "registered",
    });
    assert.equal(first.created, true);
    assert.equal(second.created, false);
    assert.equal(second.target.config_digest, first.target.config_digest);
    assert.equal((await listTargets(db)).length, 1);
    assert.equal((await listEntries(db, "target")).length, 1);
  });
});

Deno.test("registerTarget() refuses a different config naming only the fields", async () => {
  await withDb(async (db) => {
    await migrate(db, ALL_MIGRATIONS);
    await registerTarget(db, {
      targetId: "my-staging",
      config: parseStagingConfig(BASE),
      source: "registered",
    });
    const changed = parseStagingConfig({
      ...BASE,
      token_env: "OTHER_SECRET_NAME",
      timeout_seconds: { query: 3 },
    });
    await assert.rejects(
      () =>
        registerTarget(db, {
          targetId: "my-staging",
          config: changed,
          source: "registered",
        }),
      (error: Error) => {
        assert.ok(error instanceof ConflictError);
        assert.match(error.message, /timeout_seconds\.query, token_env differ/);
        assert.doesNotMatch(error.message, /OTHER_SECRET_NAME|STAGING_TOKEN/);
        return true;
      },
    );
    assert.equal(exitCodeFor(new ConflictError("x")), 2);
  });
});

Deno.test("validateTargetId() rejects ids outside the allowed pattern", () => {
  assert.equal(validateTargetId("my-staging.v2"), "my-staging.v2");
  for (const bad of ["", "My-Staging", "-x", "a/b", "x".repeat(65), "../x"]) {
    assert.throws(() => validateTargetId(bad), UsageError, bad);
  }
});

Deno.test("configDifferences() walks nested objects", () => {
  assert.deepEqual(
    configDifferences({ a: 1, b: { c: 2, d: 3 } }, { a: 1, b: { c: 5 } }),
    ["b.c", "b.d"],
  );
});

Deno.test("externalRegister() registers once and externalTargets() lists it as JSON", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/config.json`;
    await Deno.writeTextFile(path, JSON.stringify(BASE));
    const flags = ["--data-dir", `${dir}/data`];
    const io = captureIo();
    assert.equal(
      await externalRegister([
        "--target",
        "my-staging",
        "--config",
        path,
        ...flags,
      ], io),
      0,
    );
    assert.match(io.stdout(), /registered target my-staging/);
    const again = captureIo();
    await externalRegister(
      ["--target", "my-staging", "--config", path, "--json", ...flags],
      again,
    );
    assert.equal(JSON.parse(again.stdout()).created, false);
    await Deno.writeTextFile(
      path,
      JSON.stringify({ ...BASE, base_url: "https://other.example.test" }),
    );
    await assert.rejects(
      () =>
        externalRegister(
          ["--target", "my-staging", "--config", path, ...flags],
          captureIo(),
        ),
      /base_url differs/,
    );
    // The ids of config-only runs cannot be taken by a registration.
    await assert.rejects(
      () =>
        externalRegister(
          ["--target", "cfg-c84944fb7ae3", "--config", path, ...flags],
          captureIo(),
        ),
      /Cannot register target "cfg-c84944fb7ae3": ids starting with cfg- are kept for configs run with --config alone; choose another id/,
    );
    const list = captureIo();
    await externalTargets(["--json", ...flags], list);
    const targets = JSON.parse(list.stdout()).targets;
    assert.deepEqual(targets.map((t: { target_id: string }) => t.target_id), [
      "my-staging",
    ]);
    assert.equal(targets[0].config.token_env, "STAGING_TOKEN");
  });
});
