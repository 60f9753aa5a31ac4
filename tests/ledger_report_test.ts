import assert from "node:assert/strict";
import { familyResults } from "../lib/runner/families.ts";
import {
  renderJunit,
  renderJunitNotStarted,
  renderJunitUnfinished,
  xmlEscape,
} from "../lib/render/junit.ts";
import {
  markdownEscape,
  renderSummaryMarkdown,
  renderSummaryNotStarted,
  renderSummaryUnfinished,
} from "../lib/render/summary_md.ts";
import { whatToCheck } from "../lib/runner/finding_checks.ts";
import { memoryCheckpointSink } from "../lib/runner/checkpoint.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import type { RunReport } from "../lib/runner/report.ts";
import {
  type FakeBehaviour,
  FakeTarget,
  VirtualClock,
} from "./_fake_target.ts";
import { stagingConfig } from "./_helpers.ts";

const CONFIG = stagingConfig({ deletion_window_seconds: 1 });

async function run(behaviour: FakeBehaviour = {}): Promise<RunReport> {
  const clock = new VirtualClock();
  return await runDeletionContract(CONFIG, {
    transport: new FakeTarget(clock, behaviour),
    target: { id: "t<&\"'>", base_url: CONFIG.base_url, source: "registered" },
    checkpoint: memoryCheckpointSink(),
    clock,
  });
}

function testcases(xml: string): Map<string, string> {
  const cases = new Map<string, string>();
  for (
    const match of xml.matchAll(
      /<testcase name="([^"]+)"[^>]*>([\s\S]*?)<\/testcase>/g,
    )
  ) {
    cases.set(match[1]!, match[2]!);
  }
  return cases;
}

Deno.test("renderJunit() writes one test case per family with FAIL as <failure>", async () => {
  const xml = renderJunit(await run({ staleCache: true }));
  const cases = testcases(xml);
  assert.deepEqual([...cases.keys()], [
    "baseline",
    "deletion.source_records",
    "deletion.vector_records",
    "deletion.cache_records",
    "retrieval",
    "control",
    "cleanup",
  ]);
  assert.match(
    cases.get("deletion.cache_records")!,
    /<failure message="cache_records stayed at 1/,
  );
  assert.match(cases.get("retrieval")!, /<failure /);
  assert.doesNotMatch(cases.get("deletion.source_records")!, /<failure|<error/);
  assert.match(
    cases.get("cleanup")!,
    /<failure message="Cleanup did not complete[^"]*" type="cleanup_incomplete">/,
  );
  assert.doesNotMatch(xml, /<skipped|INCONCLUSIVE/);
  assert.match(
    xml,
    /<testsuite name="trace\.deletion-contract\.t&lt;&amp;&quot;&apos;&gt;" tests="7" failures="3" errors="0" skipped="0"/,
  );
  assert.match(xml, /<property name="verdict" value="FAIL"\/>/);
  assert.equal(
    cases.get("deletion.source_records")!.trim(),
    "",
    "a passing case carries no run verdict",
  );
});

Deno.test("renderJunit() writes INCONCLUSIVE as <error>, never skipped", async () => {
  const report = await run({ fail: { op: "inventory" } });
  assert.equal(report.verdict, "INCONCLUSIVE");
  const cases = testcases(renderJunit(report));
  assert.match(cases.get("baseline")!, /<error /);
  for (const family of ["deletion.cache_records", "retrieval", "control"]) {
    assert.match(cases.get(family)!, /<error [^>]*>not evaluated/, family);
  }
});

Deno.test("renderJunit() writes a cleanup that alone made the run INCONCLUSIVE as <error>", async () => {
  const report = await run({ fail: { op: "delete", afterDelete: true } });
  assert.equal(report.verdict, "INCONCLUSIVE");
  const cases = testcases(renderJunit(report));
  assert.match(cases.get("cleanup")!, /<error [^>]*type="INCONCLUSIVE"/);
  assert.equal(cases.get("retrieval")!.trim(), "");
});

Deno.test("familyResults() passes every family of a healthy run", async () => {
  const results = familyResults(await run());
  assert.deepEqual(results.map((r) => r.status), Array(7).fill("pass"));
});

Deno.test("xmlEscape() escapes markup and drops control characters", () => {
  assert.equal(xmlEscape(`a<b>&"c'\u0001`), "a&lt;b&gt;&amp;&quot;c&apos;");
});

Deno.test("renderSummaryMarkdown() gives verdict, checks, findings, cleanup and the replay command", async () => {
  const report = await run({ staleCache: true });
  const md = renderSummaryMarkdown(report, {
    replayCommand: "trace external-replay reg-1 --data-dir ./d",
    ledgerHead: "7:sha256:abc",
    dataFlags: " --data-dir ./d",
  });
  assert.match(md, /^### Trace deletion contract: FAIL\n/);
  // Every command it prints names the data directory, as the text report does.
  assert.match(md, /`trace external-cleanup run-[^`]+ --data-dir \.\/d`/);
  assert.match(
    md,
    /`trace ledger verify --expect-head 7:sha256:abc --data-dir \.\/d`/,
  );
  assert.match(md, /\| deletion\.cache_records \| \*\*FAIL\*\* \|/);
  assert.match(md, /\| cleanup \| \*\*INCOMPLETE\*\* \|/);
  assert.doesNotMatch(md, /INCONCLUSIVE/);
  assert.match(
    md,
    /- FAIL `residual_store` \(cache_records\): cache\\_records stayed at 1/,
  );
  // What to check, as the text report and the run page lead with it.
  const checks = whatToCheck(report);
  assert.ok(checks.length > 0);
  assert.ok(
    md.includes(
      `\n#### What to check\n\n${
        checks.map((c) => `- ${markdownEscape(c)}`).join("\n")
      }\n\n#### Cleanup\n`,
    ),
    md,
  );
  assert.match(md, /#### Cleanup\n\n\*\*Incomplete\*\*/);
  assert.match(md, /```sh\ntrace external-replay reg-1 --data-dir \.\/d\n```/);
  assert.match(md, /\(http:\/\/127\.0\.0\.1:1\)/);
});

Deno.test("renderSummaryMarkdown() lists a PASS's transient residual and notes, marked as not failing", async () => {
  const report = await run({ vectorDelayMs: 600 });
  assert.equal(report.verdict, "PASS");
  const md = renderSummaryMarkdown(report, { replayCommand: null });
  assert.doesNotMatch(md, /- none/);
  assert.match(
    md,
    /\n- TRANSIENT \(recorded, not failing\) `transient_residual` \(vector_records\): vector\\_records was 3 from 0\.00 s to /,
  );
  assert.match(
    md,
    /\n- note \(does not change the verdict\) `erased` \(deletion\): Every store read 0/,
  );
  // As the text report orders them.
  assert.ok(md.indexOf("TRANSIENT") < md.indexOf("`erased`"));
  assert.doesNotMatch(md, /What to check/);
});

Deno.test("renderSummaryMarkdown() heads a plain rerun 'Run again', keeping 'Replay' for a regression", async () => {
  const pass = await run();
  const rerun = renderSummaryMarkdown(pass, {
    replayCommand: null,
    rerunCommand: "trace external-run --target t",
  });
  assert.match(
    rerun,
    /\n#### Run again\n\n```sh\ntrace external-run --target t\n```/,
  );
  assert.doesNotMatch(rerun, /Replay/);
  const replayed = renderSummaryMarkdown(pass, {
    replayCommand: "trace external-replay reg-1",
    regressionId: "reg-1",
  });
  assert.match(
    replayed,
    /\n#### Replay\n\n```sh\ntrace external-replay reg-1\n```/,
  );
});

Deno.test("renderJunitNotStarted() is one test case in error with the reason, escaped", () => {
  const xml = renderJunitNotStarted({
    code: "transport",
    message: 'Cannot reach "a<b>&c" \u001b[31m; start it',
  });
  assert.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites /);
  assert.match(
    xml,
    /<testsuite [^>]*tests="1" failures="0" errors="1" skipped="0"/,
  );
  const cases = testcases(xml);
  assert.deepEqual([...cases.keys()], ["run did not start"]);
  const reason = "Cannot reach &quot;a&lt;b&gt;&amp;c&quot; [31m; start it";
  assert.equal(
    cases.get("run did not start")!.trim(),
    `<error message="${reason}" type="transport">${reason}</error>`,
  );
  assert.match(xml, /<property name="state" value="not_started"\/>/);
  assert.doesNotMatch(xml, /<skipped|<failure|verdict/);
});

Deno.test("renderSummaryNotStarted() says there is no verdict, why, and what to do", () => {
  const md = renderSummaryNotStarted({
    code: "config_invalid",
    message: "Invalid config c\u001b[2J.json: base_url: must be a string <b>",
  });
  assert.match(md, /^### Trace deletion contract: did not start\n/);
  assert.match(md, /no verdict/);
  assert.match(
    md,
    /\*\*Why\*\* \(`config_invalid`\): Invalid config c\\\[2J\.json: base\\_url: must be a string \\<b\\>\n/,
  );
  assert.match(md, /\*\*What to do\*\*: /);
  assert.doesNotMatch(md, /PASS|FAIL|INCONCLUSIVE/);
});

const UNFINISHED = {
  code: "storage",
  message: "Cannot append <run> to the ledger: disk \u001b[31mfull",
  run_id: "run-20990101T000000Z-0000000000e1",
  checkpoint: "/data/external/run-20990101T000000Z-0000000000e1.json",
  cleanup_command:
    "trace external-cleanup run-20990101T000000Z-0000000000e1 --data-dir /data",
};

Deno.test("renderJunitUnfinished() is one test case in error: the reason, the checkpoint and the cleanup command", () => {
  const xml = renderJunitUnfinished(UNFINISHED);
  assert.match(
    xml,
    /<testsuite [^>]*tests="1" failures="0" errors="1" skipped="0"/,
  );
  const cases = testcases(xml);
  assert.deepEqual([...cases.keys()], ["run did not finish"]);
  const reason = "Cannot append &lt;run&gt; to the ledger: disk [31mfull";
  assert.equal(
    cases.get("run did not finish")!.trim(),
    `<error message="${reason}" type="storage">${reason}\nSynthetic records may remain: its checkpoint ${UNFINISHED.checkpoint} lists every id it issued; remove them with: ${UNFINISHED.cleanup_command}</error>`,
  );
  const properties: [string, string][] = [
    ["state", "unfinished"],
    ["run_id", UNFINISHED.run_id],
    ["checkpoint", UNFINISHED.checkpoint],
    ["error_code", "storage"],
  ];
  for (const [name, value] of properties) {
    assert.ok(
      xml.includes(`<property name="${name}" value="${value}"/>`),
      name,
    );
  }
  assert.doesNotMatch(xml, /<skipped|<failure|verdict/);
});

Deno.test("renderSummaryUnfinished() says the run left no verdict, why, and how to remove what may remain", () => {
  const md = renderSummaryUnfinished(UNFINISHED);
  assert.match(md, /^### Trace deletion contract: did not finish\n/);
  assert.match(md, /synthetic records it wrote may remain/);
  assert.match(
    md,
    /\*\*Why\*\* \(`storage`\): Cannot append \\<run\\> to the ledger: disk \\\[31mfull\n/,
  );
  assert.ok(
    md.includes(`\n\`\`\`sh\n${UNFINISHED.cleanup_command}\n\`\`\`\n`),
    md,
  );
  assert.doesNotMatch(md, /PASS|FAIL|INCONCLUSIVE/);
});
