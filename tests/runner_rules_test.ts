/** The rules revision, its pinned digest, and the catalogue of finding codes it covers. */

import assert from "node:assert/strict";
import type { StagingConfig } from "../lib/contract/config.ts";
import type { StagingTransport } from "../lib/contract/protocol.ts";
import { memoryCheckpointSink } from "../lib/runner/checkpoint.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import type { RunReport } from "../lib/runner/report.ts";
import {
  ASSERTION_RULES_DIGEST,
  ASSERTION_RULES_REVISION,
  FINDING_CODES,
  type FindingRule,
  rulesDigest,
} from "../lib/runner/rules.ts";
import {
  type FakeBehaviour,
  FakeTarget,
  VirtualClock,
} from "./_fake_target.ts";
import { stagingConfig } from "./_helpers.ts";

/**
 * Every revision ever released with the digest of what it covered. A change
 * to the codes or families needs a new revision here and in `rules.ts`; an
 * old revision must keep its digest, or stored regressions change meaning.
 */
const RELEASED_REVISIONS: Record<string, string> = {
  "trace-assertions/1":
    "sha256:fb68b52db81e3db739a2ec4d45dcfb9d00e5765d1fb69519c2c536b6a6bfe52c",
  "trace-assertions/2":
    "sha256:919ca1af815d6437b06e1f6553fafefa76402512ae936100a6a9d0eb54689802",
  "trace-assertions/3":
    "sha256:d390ec5cfce7ae32438fd4836f789444ae865e59e67cd974faad03928697a45f",
  "trace-assertions/4":
    "sha256:5885713862f1fc32a5e3f3afe655654f4763bbdc3766a923d77945caf5e17bc2",
  "trace-assertions/5":
    "sha256:7ae9ca3a9c685a6a4269dce1f8462776aa5a786a83d433626726e7556e949073",
  "trace-assertions/6":
    "sha256:6c41b1d7b40089451a7a5c894c65a1126407353a71b478554853a5ccf19f9f69",
  "trace-assertions/7":
    "sha256:420b6d084ffe9dfef53d0652b2c505414d767ead6f995d25edc98f7a92b95c3e",
  "trace-assertions/8":
    "sha256:1505e91aa2182b1fc37b2e9c0f921881b4fb17af3cb4ef6f77786880de141c9a",
  "trace-assertions/9":
    "sha256:ebdc2ac1e8085df6e295143a66a830de3c9e3ad0bb9a23011c0e571937f13691",
  "trace-assertions/10":
    "sha256:f368e6c64a8d942582a192f8c195d2ccbd58772602bd5f6d7b3bd0479fee1171",
  "trace-assertions/11":
    "sha256:1b4716603e9d4edfaaaed70d4f30e00a8d5837ea9e042dc4b0ca93b618c423b9",
  "trace-assertions/12":
    "sha256:dbf99bfa1e2ae5c2af833f20d222a0fddc9d0da849d5709fe3ef131dc3a4fe15",
};

Deno.test("the pinned rules digest matches the finding codes and families of this build", () => {
  assert.equal(
    rulesDigest(),
    ASSERTION_RULES_DIGEST,
    "finding codes, severities, subjects or families changed: bump ASSERTION_RULES_REVISION and pin the new digest in lib/runner/rules.ts",
  );
});

Deno.test("a released rules revision keeps the digest it was released with", () => {
  const released = RELEASED_REVISIONS[ASSERTION_RULES_REVISION];
  assert.ok(
    released,
    `revision ${ASSERTION_RULES_REVISION} is not listed in RELEASED_REVISIONS; add it with its digest`,
  );
  assert.equal(
    ASSERTION_RULES_DIGEST,
    released,
    `the rules changed under the released revision ${ASSERTION_RULES_REVISION}: bump the revision instead`,
  );
});

const CONFIG = stagingConfig({ deletion_window_seconds: 1 });
const TARGET = {
  id: "rules",
  base_url: CONFIG.base_url,
  source: "config",
} as const;

type Scenario = {
  config?: StagingConfig;
  behaviour?: FakeBehaviour;
  /** Rewrites answers once the test deletion was sent; `exchange` lets an answer carry the marker or take a while. */
  afterDelete?: (
    op: string,
    namespace: string,
    answer: Record<string, unknown>,
    exchange: { body: Record<string, unknown>; clock: VirtualClock },
  ) => Record<string, unknown> | Error;
  aborted?: boolean;
  failCompletion?: boolean;
};

async function run(scenario: Scenario): Promise<RunReport> {
  const clock = new VirtualClock();
  const fake = new FakeTarget(clock, scenario.behaviour ?? {});
  let deleted = false;
  const transport: StagingTransport = {
    post: async (op, body) => {
      const answer = await fake.post(op, body);
      if (op === "delete") {
        const wasDeleted = deleted;
        deleted = true;
        if (!wasDeleted) return answer;
      }
      if (!deleted || !scenario.afterDelete) return answer;
      const changed = scenario.afterDelete(
        op,
        String(body.namespace),
        answer,
        { body, clock },
      );
      if (changed instanceof Error) throw changed;
      return changed;
    },
  };
  const memory = memoryCheckpointSink();
  const controller = new AbortController();
  if (scenario.aborted) controller.abort();
  return await runDeletionContract(scenario.config ?? CONFIG, {
    transport,
    target: TARGET,
    clock,
    signal: controller.signal,
    checkpoint: scenario.failCompletion
      ? {
        location: "(failing)",
        write: (checkpoint) =>
          checkpoint.state === "completed"
            ? Promise.reject(new Error("disk full"))
            : memory.write(checkpoint),
      }
      : memory,
  });
}

const isControl = (namespace: string) => namespace.startsWith("trace-control-");

/** Marker queries of the test namespace after the deletion, counted across a scenario's run. */
function testQueries(): (op: string, namespace: string) => number {
  let queries = 0;
  return (op, namespace) =>
    op === "query" && !isControl(namespace) ? ++queries : 0;
}

const flapping = testQueries();
const slow = testQueries();

const SCENARIOS: Record<string, Scenario> = {
  healthy: {},
  "stale cache": { behaviour: { staleCache: true } },
  "slow vectors": { behaviour: { vectorDelayMs: 300 } },
  "lost control": { behaviour: { loseControl: true } },
  "canaries moved into the control namespace": {
    behaviour: { moveToControl: true },
  },
  "failed ingest": { behaviour: { fail: { op: "ingest" } } },
  "unacknowledged delete": { behaviour: { fail: { op: "delete" } } },
  "query errors in the window": {
    behaviour: { fail: { op: "query", afterDelete: true } },
  },
  "test inventory incomplete in the window": {
    afterDelete: (op, namespace, answer) =>
      op === "inventory" && !isControl(namespace)
        ? { ...answer, complete: false }
        : answer,
  },
  "control inventory incomplete in the window": {
    afterDelete: (op, namespace, answer) =>
      op === "inventory" && isControl(namespace)
        ? { ...answer, complete: false }
        : answer,
  },
  "control never deleted at cleanup": {
    afterDelete: (op, namespace, answer) =>
      op === "delete" && isControl(namespace)
        ? new Error("cleanup delete refused")
        : answer,
  },
  "a count the contract does not name": {
    afterDelete: (op, namespace, answer) =>
      op === "inventory" && !isControl(namespace)
        ? { ...answer, history_records: 3 }
        : answer,
  },
  "a marker served by every other query": {
    // Samples at 0, 0.5, 1, 1.5: seen, clean, seen, clean.
    config: stagingConfig({ deletion_window_seconds: 1.5 }),
    afterDelete: (op, namespace, answer, { body }) =>
      flapping(op, namespace) % 2 === 1
        ? { text: `It says ${String(body.query)} here` }
        : answer,
  },
  "a slow answer that still carried the marker": {
    afterDelete: (op, namespace, answer, { body, clock }) => {
      // The first sample's query takes past the window and its interval.
      if (slow(op, namespace) !== 1) return answer;
      clock.advance(2_000);
      return { text: `It says ${String(body.query)} here` };
    },
  },
  interrupted: { aborted: true },
  "checkpoint not completed": { failCompletion: true },
};

Deno.test("every finding a run produces is declared, and every declared code is produced", async (t) => {
  const rules = FINDING_CODES as Record<string, FindingRule>;
  const produced = new Set<string>();
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    await t.step(name, async () => {
      const report = await run(scenario);
      for (const finding of report.findings) {
        const rule = rules[finding.code];
        assert.ok(rule, `undeclared finding code ${finding.code}`);
        assert.ok(
          rule.severities.includes(finding.severity),
          `${finding.code} carried undeclared severity ${finding.severity}`,
        );
        assert.ok(
          rule.subjects.includes(finding.subject),
          `${finding.code} carried undeclared subject ${finding.subject}`,
        );
        produced.add(finding.code);
      }
    });
  }
  assert.deepEqual(
    [...produced].sort(),
    Object.keys(rules).sort(),
    "a declared finding code is never produced (or a scenario is missing)",
  );
});
