/**
 * An adapter knows the bearer token it is sent, and the transport replaces
 * that token in every answer before the run sees it. A hostile adapter must
 * not be able to use the replacement to hide a deleted canary: by gluing
 * the token to the marker's random part (the replacement then eats part of
 * it), or by writing it into two keys that the replacement makes equal (the
 * later value then overwrote the one holding the marker). Either way the run
 * passed while the deleted text was still retrievable.
 */

import assert from "node:assert/strict";
import { REDACTED_TOKEN, tokenRedactor } from "../lib/http/_redact.ts";
import { wasAltered } from "../lib/contract/protocol.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { newRunIdentifiers, type RunIdentifiers } from "../lib/runner/ids.ts";
import { type InterceptedRequest, runFake } from "./_fake_target.ts";

const PREFIX = "trace_canary_";
const TOKEN = "staging-token-abc123";

/** Runs with every test /query answer after the deletion rewritten by `hide`, then redacted as the transport does. */
async function runHiding(
  hide: (marker: string) => {
    token: string;
    answer: Record<string, unknown>;
  },
): Promise<RunReport> {
  const { report } = await runFake({
    identifiers: uncutIdentifiers(),
    hook: async (request: InterceptedRequest, forward) => {
      const answer = await forward();
      if (
        request.op !== "query" || request.role !== "test" ||
        request.stage === "setup"
      ) {
        return answer;
      }
      const hidden = hide(String(request.body.query));
      return tokenRedactor(hidden.token).answer(hidden.answer);
    },
  });
  return report;
}

/**
 * Identifiers whose marker's random part does not start with `n`: the
 * replacement `[redacted token]` folds to `…t0ken`, whose `n` would give
 * back the character it cut, so the marker would be read whole (a FAIL).
 */
function uncutIdentifiers(): RunIdentifiers {
  for (;;) {
    const ids = newRunIdentifiers(3);
    if (ids.marker[PREFIX.length] !== "n") return ids;
  }
}

Deno.test("a token glued to the marker's random part does not make the cut marker read as gone", async () => {
  const report = await runHiding((marker) => {
    const random = marker.slice(PREFIX.length);
    // A token whose last character is the random part's first.
    const token = `${TOKEN}-${random[0]}`;
    return {
      token,
      answer: { text: "nothing", doc: `${token.slice(0, -1)}${random}` },
    };
  });
  assert.notEqual(report.verdict, "PASS");
  assert.equal(report.verdict, "INCONCLUSIVE");
  const last = report.samples.at(-1)!;
  assert.equal(last.marker_seen, null);
  assert.match(last.errors[0]!.message, /echoed the bearer token/);
  assert.ok(!JSON.stringify(report).includes(TOKEN));
});

Deno.test("two keys the token's replacement makes equal both stay, so the marker under the first is found", async () => {
  const report = await runHiding((marker) => ({
    token: TOKEN,
    answer: {
      text: "nothing",
      sources: {
        [`doc-${TOKEN}`]: `Deletion probe ${marker}.`,
        [`doc-${TOKEN.toUpperCase()}`]: "nothing",
      },
    },
  }));
  assert.equal(report.verdict, "FAIL");
  assert.equal(report.samples.at(-1)!.marker_seen, true);
  assert.ok(!JSON.stringify(report).includes(TOKEN));
});

Deno.test("the redactor keeps keys its replacement makes equal and marks what it changed", () => {
  const redactor = tokenRedactor(TOKEN);
  const answer = redactor.answer({
    [`a-${TOKEN}`]: 1,
    [`a-${TOKEN.toUpperCase()}`]: 2,
    [`a-${REDACTED_TOKEN}`]: 3,
  });
  assert.deepEqual(answer, {
    [`a-${REDACTED_TOKEN}`]: 1,
    [`a-${REDACTED_TOKEN} #2`]: 2,
    [`a-${REDACTED_TOKEN} #3`]: 3,
  });
  assert.ok(wasAltered(answer));
  assert.ok(!wasAltered(redactor.answer({ text: "clean" })));
});

Deno.test("the redactor numbers thousands of keys its replacement makes equal, each once, around a key already spelt numbered", () => {
  const letters = [...TOKEN].flatMap((c, i) => /[a-z]/i.test(c) ? [i] : []);
  const spellings: Record<string, number> = {
    [`${REDACTED_TOKEN} #3`]: -1,
  };
  // Every spelling of the token in another case: 2^n distinct keys, one after the replacement.
  const count = Math.min(2 ** letters.length, 4096);
  for (let i = 0; i < count; i++) {
    const chars = [...TOKEN];
    letters.forEach((at, bit) => {
      if ((i >> bit) & 1) chars[at] = chars[at]!.toUpperCase();
    });
    spellings[chars.join("")] = i;
  }
  const answer = tokenRedactor(TOKEN).answer(spellings);
  assert.equal(Object.keys(answer).length, count + 1);
  assert.equal(answer[`${REDACTED_TOKEN} #3`], -1);
  assert.equal(answer[REDACTED_TOKEN], 0);
  assert.equal(answer[`${REDACTED_TOKEN} #2`], 1);
  assert.equal(answer[`${REDACTED_TOKEN} #4`], 2);
  assert.deepEqual(
    new Set(Object.values(answer)),
    new Set([-1, ...Array.from({ length: count }, (_, i) => i)]),
  );
});
