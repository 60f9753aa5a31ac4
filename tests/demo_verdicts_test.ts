/** Every demo defect, over real loopback HTTP, lands on its documented verdict. */

import assert from "node:assert/strict";
import { startDemoServer } from "../cli/demo.ts";
import { parseStagingConfig } from "../lib/contract/config.ts";
import {
  DEFECT_INFO,
  DEFECTS,
  type DemoDefect,
  HEALTHY,
} from "../lib/demo/defects.ts";
import { migrate, openDb } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { configTargetId, runExternal } from "../lib/runs/external_run.ts";
import { withTempDir } from "./_helpers.ts";

async function runDemo(defect: DemoDefect | null) {
  const server = await startDemoServer({ defect, delayMs: 300 });
  try {
    return await withTempDir(async (dataDir) => {
      const db = await openDb({ dataDir });
      try {
        await migrate(db, ALL_MIGRATIONS);
        const config = parseStagingConfig({
          base_url: server.url,
          environment: "staging",
          allow_synthetic_writes: true,
          // Cleanup polls for as long as the window. Each of its deletions
          // starts a delayed job of 300 ms, and a clean poll counts only once
          // the application has settled, so 1 s left too little slack when
          // another suite's load delayed the polls (cleanup was judged
          // incomplete, rightly, with the records then gone).
          deletion_window_seconds: 2,
          sample_interval_seconds: 0.25,
        });
        const { report } = await runExternal(config, {
          db,
          dataDir,
          target: {
            id: await configTargetId(config),
            base_url: server.url,
            source: "config",
          },
        });
        // Longer than the demo's delayed jobs (300 ms): what they write back
        // after the run must not be there when cleanup said it was done.
        await new Promise((resolve) => setTimeout(resolve, 600));
        const left = {
          test: await inventoryOf(server.url, report.namespaces.test),
          control: await inventoryOf(server.url, report.namespaces.control),
        };
        return { ...report, left };
      } finally {
        db.close();
      }
    });
  } finally {
    await server.shutdown();
  }
}

async function inventoryOf(
  url: string,
  namespace: string,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/inventory`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ namespace }),
  });
  return await response.json();
}

for (const defect of [null, ...DEFECTS]) {
  const info = defect ? DEFECT_INFO[defect] : HEALTHY;
  Deno.test(`demo ${defect ?? "healthy"} gives ${info.verdict} over HTTP`, async () => {
    const report = await runDemo(defect);
    const findings = report.findings.map((f) => `${f.severity}:${f.message}`)
      .join("\n");
    assert.equal(report.verdict, info.verdict, findings);
    assert.equal(
      report.cleanup.cleanup_complete,
      info.cleanupComplete,
      report.cleanup.problems.join("; "),
    );
    if (info.cleanupComplete) {
      for (const role of ["test", "control"] as const) {
        assert.deepEqual(
          report.left[role],
          {
            complete: true,
            source_records: 0,
            vector_records: 0,
            cache_records: 0,
          },
          `${role} namespace after a complete cleanup`,
        );
      }
    }
    assert.equal(report.requests.failed, 0);
  });
}

Deno.test("demo vector-resurrect fails although an early sample was clean", async () => {
  const report = await runDemo("vector-resurrect");
  assert.equal(report.samples[0]!.inventory?.vector_records, 0);
  assert.ok(report.samples.at(-1)!.inventory!.vector_records > 0);
  assert.match(
    report.findings[0]!.message,
    /vector_records read 0 at 0\.00 s but came back/,
  );
});

Deno.test("demo slow-vector passes with a transient residual recorded", async () => {
  const report = await runDemo("slow-vector");
  const transient = report.findings.filter((f) => f.severity === "transient");
  assert.deepEqual(transient.map((f) => f.subject), ["vector_records"]);
});

Deno.test("demo soft-delete fails on retrieval while inventories read zero", async () => {
  const report = await runDemo("soft-delete");
  const last = report.samples.at(-1)!;
  assert.equal(last.inventory?.source_records, 0);
  assert.equal(last.inventory?.vector_records, 0);
  assert.equal(last.marker_seen, true);
});
