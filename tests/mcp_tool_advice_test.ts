/** What an assistant reads instead of the CLI commands a refusal names. */

import assert from "node:assert/strict";
import { toolAdvice } from "../lib/mcp/_tool_advice.ts";

Deno.test("toolAdvice() names a command's tool twin with the command's id as its argument", () => {
  const cases: [string, string][] = [
    [
      "Cannot find regression r-1; list them with trace external-regressions",
      "Cannot find regression r-1; list them with trace.external_regressions",
    ],
    [
      'No target "x" is registered or has a run; trace external-targets --all lists the targets',
      'No target "x" is registered or has a run; trace.external_targets with all: true lists the targets',
    ],
    [
      "it is the same run (trace external-runs --target cfg-1a lists them)",
      "it is the same run (trace.external_runs with target_id cfg-1a lists them)",
    ],
    [
      "list runs with trace external-runs (run ids are also printed by trace external-run); check --data-dir",
      "list runs with trace.external_runs (run ids are also printed by trace.external_start); check --data-dir",
    ],
    [
      "run trace external-run --target staging-a first",
      "run trace.external_start with target_id staging-a first",
    ],
    [
      "see trace external-show run-1 and trace ledger verify",
      "see trace.external_get with run_id run-1 and trace ledger verify",
    ],
    [
      "see trace external-show on that run id",
      "see trace.external_get on that run id",
    ],
    [
      "see trace reference show run-2",
      "see trace.reference_get with run_id run-2",
    ],
    [
      "reference systems are rechecked by trace reference run",
      "reference systems are rechecked by trace.reference_run",
    ],
    [
      "see trace external-show run-1.",
      "see trace.external_get with run_id run-1.",
    ],
    [
      "run trace external-run --target 'my target' --data-dir /srv/t first",
      "run trace.external_start with target_id 'my target' first",
    ],
  ];
  for (const [refusal, expected] of cases) {
    assert.equal(toolAdvice(refusal), expected);
  }
});

Deno.test("toolAdvice() leaves commands without a tool twin for the assistant's user", () => {
  const refusal =
    'Cannot find target "x"; register it with trace external-register --target x --config FILE, then trace external-cleanup --run-id run-1';
  assert.equal(toolAdvice(refusal), refusal);
});
