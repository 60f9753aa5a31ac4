/**
 * Where a /query answer carries a marker: anywhere in the answer (other
 * fields, nested objects and arrays, keys) and in either namespace's answer.
 * A deleted canary's marker there after the deletion is retrieval evidence;
 * the report says where, and never repeats the answer.
 */

import assert from "node:assert/strict";
import { parseJsonObject } from "../lib/json/strict_json.ts";
import { findingChecks } from "../lib/runner/finding_checks.ts";
import { EVIDENCE_CHECKS } from "../lib/runner/finding_guide.ts";
import {
  describeRendering,
  type RenderingTrait,
} from "../lib/runner/marker/mod.ts";
import type { RunReport } from "../lib/runner/report.ts";
import {
  findingsOf,
  type InterceptedRequest,
  runFake,
} from "./_fake_target.ts";

const inWindow = (request: InterceptedRequest, role: "test" | "control") =>
  request.stage === "window" && request.role === role;

function retrievalFinding(report: RunReport) {
  const finding = report.findings.find((f) => f.code === "marker_retrievable");
  assert.ok(finding, JSON.stringify(report.findings, null, 1));
  return finding;
}

Deno.test("a deleted marker anywhere in the /query answer at the final sample is FAIL, and the finding names the field", async (t) => {
  const cases: [
    string,
    (marker: string) => Record<string, unknown>,
    string,
  ][] = [
    ["in an array of sources", (m) => ({
      text: "I have nothing on that",
      sources: [{ id: "doc-1", content: `Deletion probe ${m}.` }],
    }), "sources.0.content"],
    [
      "in a key",
      (m) => ({ text: "none", scores: { [m]: 0.92 } }),
      "scores.(key)",
    ],
    ["rendered, deep inside", (m) => ({
      text: "none",
      context: { chunks: [[{ html: m.replaceAll("_", "&#95;") }]] },
    }), "context.chunks.0.0.html"],
    ["echoed back as the query", (m) => ({ text: "none", query: m }), "query"],
    ["under a key that is not a name", (m) => ({
      text: "none",
      "user@example.com": { note: m },
    }), "*.note"],
  ];
  for (const [name, answerOf, field] of cases) {
    await t.step(name, async () => {
      const { report } = await runFake({
        hook: (request, forward) =>
          request.op === "query" && inWindow(request, "test")
            ? Promise.resolve(answerOf(String(request.body.query)))
            : forward(),
      });
      assert.equal(report.verdict, "FAIL");
      assert.deepEqual(findingsOf(report, "fail"), [
        "marker_retrievable:retrieval",
      ]);
      const last = report.samples.at(-1)!;
      assert.equal(last.marker_seen, true);
      assert.deepEqual(last.marker_found_in, { query: "test", field });
      assert.match(
        retrievalFinding(report).message,
        new RegExp(
          `in the field ${
            field.replace(/[.*()]/g, "\\$&")
          } of the /query answer rather than its text`,
        ),
      );
      assert.equal(
        findingChecks(retrievalFinding(report), report)[0],
        EVIDENCE_CHECKS.answerElsewhere,
      );
      assert.doesNotMatch(JSON.stringify(report), /example\.com/);
    });
  }
});

Deno.test("a deleted marker under a key that names an object's internals is found like any other", async (t) => {
  for (const key of ["__proto__", "constructor", "prototype"]) {
    await t.step(key, async () => {
      const { report } = await runFake({
        hook: (request, forward) =>
          request.op === "query" && inWindow(request, "test")
            // Parsed as the strict HTTP client parses an answer: the key is data.
            ? Promise.resolve(
              parseJsonObject(
                `{"text":"none","${key}":{"content":"${request.body.query}"}}`,
              ),
            )
            : forward(),
      });
      assert.equal(report.verdict, "FAIL");
      assert.deepEqual(report.samples.at(-1)!.marker_found_in, {
        query: "test",
        field: `${key}.content`,
      });
    });
  }
});

Deno.test("the deleted canary's marker in the control query's answer is FAIL, named as coming from the control namespace", async () => {
  let testMarker = "";
  const { report } = await runFake({
    hook: async (request, forward) => {
      if (request.op === "query" && request.role === "test") {
        testMarker = String(request.body.query);
      }
      const answer = await forward();
      return request.op === "query" && inWindow(request, "control")
        ? { ...answer, related: [`Deletion probe ${testMarker}.`] }
        : answer;
    },
  });
  assert.ok(report.samples.every((s) => s.control_seen === true));
  assert.equal(report.verdict, "FAIL");
  assert.deepEqual(findingsOf(report, "fail"), [
    "marker_retrievable:retrieval",
  ]);
  assert.deepEqual(report.samples.at(-1)!.marker_found_in, {
    query: "control",
    field: "related.0",
  });
  assert.match(
    retrievalFinding(report).message,
    /in the field related\.0 of the control namespace's \/query answer: the deleted canary is retrievable from outside the test namespace/,
  );
});

Deno.test("the control marker in the test query's answer says nothing about the deletion: PASS", async () => {
  let controlMarker = "";
  const { report } = await runFake({
    hook: async (request, forward) => {
      if (request.op === "query" && request.role === "control") {
        controlMarker = String(request.body.query);
      }
      const answer = await forward();
      return request.op === "query" && inWindow(request, "test")
        ? { ...answer, related: [controlMarker] }
        : answer;
    },
  });
  assert.equal(report.verdict, "PASS");
  assert.ok(report.samples.every((s) => s.marker_found_in === null));
});

Deno.test("a marker found in text is placed there, and a sample without one has no place", async () => {
  const { report } = await runFake({
    hook: (request, forward) =>
      request.op === "query" && inWindow(request, "test") &&
        request.sample === 0
        ? Promise.resolve({ text: String(request.body.query) })
        : forward(),
  });
  assert.equal(report.verdict, "PASS");
  assert.deepEqual(report.samples[0]!.marker_found_in, {
    query: "test",
    field: "text",
  });
  assert.equal(report.samples[1]!.marker_found_in, null);
  const transient = report.findings.find((f) =>
    f.code === "transient_residual"
  )!;
  assert.doesNotMatch(transient.message, /rather than its text/);
});

Deno.test("after cleanup, either marker in either namespace's answer keeps the cleanup incomplete", async (t) => {
  for (const role of ["test", "control"] as const) {
    await t.step(
      `the ${role} marker in the other namespace's answer`,
      async () => {
        const markers = { test: "", control: "" };
        const { report } = await runFake({
          hook: async (request, forward) => {
            if (request.op === "query") {
              markers[request.role] = String(request.body.query);
            }
            const answer = await forward();
            return request.op === "query" && request.stage === "cleanup" &&
                request.role !== role
              ? { ...answer, sources: [markers[role]] }
              : answer;
          },
        });
        assert.equal(report.cleanup.cleanup_complete, false);
        assert.equal(report.cleanup.marker_seen[role], true);
        assert.deepEqual(report.cleanup.problems, [
          `the ${role} marker is still retrievable through /query after cleanup`,
        ]);
        assert.equal(report.verdict, "INCONCLUSIVE");
      },
    );
  }
});

Deno.test("a deleted marker split by markup tags, streamed in chunks or shipped encoded is FAIL, and the finding names the rendering", async (t) => {
  const utf8Base64 = (text: string) =>
    btoa(String.fromCharCode(...new TextEncoder().encode(text)));
  const utf8Hex = (text: string) =>
    Array.from(
      new TextEncoder().encode(text),
      (b) => b.toString(16).padStart(2, "0"),
    ).join("");
  const cases: [
    string,
    (marker: string) => Record<string, unknown>,
    RenderingTrait,
    string,
  ][] = [
    [
      "<wbr> every 8 characters",
      (m) => ({
        text: `<p>${m.replace(/(.{8})/g, "$1<wbr>")}</p>`,
      }),
      "markup_tags",
      "text",
    ],
    [
      "search highlighting",
      (m) => ({
        text: `${m.slice(0, 13)}<mark>${m.slice(13, 20)}</mark>${m.slice(20)}`,
      }),
      "markup_tags",
      "text",
    ],
    [
      "streamed chunks",
      (m) => ({ text: "", tokens: m.match(/.{1,3}/g) }),
      "split_items",
      "tokens",
    ],
    [
      "chunks stored as fields of the answer",
      (m) => ({
        text: "none",
        chunk_0: `Deletion probe ${m.slice(0, 25)}`,
        chunk_1: `${m.slice(25)} more`,
      }),
      "split_items",
      "(answer)",
    ],
    [
      "a document returned in parts",
      (m) => ({
        text: "none",
        document: {
          part1: m.slice(0, 20),
          part2: m.slice(20, 30),
          part3: m.slice(30),
        },
      }),
      "split_items",
      "document",
    ],
    [
      "base64 content",
      (m) => ({
        text: "I found nothing relevant.",
        sources: [{ content_b64: utf8Base64(`Deletion probe ${m}.`) }],
      }),
      "base64",
      "sources.0.content_b64",
    ],
    [
      "a data URI",
      (m) => ({
        text: "See the attachment.",
        attachments: [`data:text/plain;base64,${utf8Base64(m)}`],
      }),
      "base64",
      "attachments.0",
    ],
    [
      "hex content",
      (m) => ({ text: "none", raw: `0x${utf8Hex(`Deletion probe ${m}.`)}` }),
      "hex",
      "raw",
    ],
    [
      "a hex dump with offsets and a text column",
      (m) => ({
        text: "none",
        raw: (utf8Hex(`Deletion probe ${m}.`).match(/.{1,32}/g) ?? []).map(
          (line, i) =>
            `${(16 * i).toString(16).padStart(8, "0")}: ${
              line.replace(/(....)(?!$)/g, "$1 ")
            }  ${"x".repeat(line.length / 2)}`,
        ).join("\n"),
      }),
      "hex",
      "raw",
    ],
    [
      "mathematical bold digits",
      (m) => ({
        text: m.replace(/[0-9]/g, (d) => String.fromCodePoint(0x1d7ce + +d)),
      }),
      "compatibility_forms",
      "text",
    ],
    [
      "a percent-encoded link",
      (m) => ({
        text: "none",
        link: `https://app.example/search?q=${
          Array.from(m, (ch) => `%${ch.charCodeAt(0).toString(16)}`).join("")
        }`,
      }),
      "percent_encoding",
      "link",
    ],
    [
      "a JSON document encoded twice",
      (m) => ({
        text: `{"note": "${
          Array.from(m, (ch) => `\\u00${ch.charCodeAt(0).toString(16)}`)
            .join("")
        }"}`,
      }),
      "string_escapes",
      "text",
    ],
  ];
  for (const [name, answerOf, trait, field] of cases) {
    await t.step(name, async () => {
      const { report } = await runFake({
        hook: (request, forward) =>
          request.op === "query" && inWindow(request, "test")
            ? Promise.resolve(answerOf(String(request.body.query)))
            : forward(),
      });
      assert.equal(report.verdict, "FAIL");
      assert.deepEqual(findingsOf(report, "fail"), [
        "marker_retrievable:retrieval",
      ]);
      const last = report.samples.at(-1)!;
      assert.equal(last.marker_form, "rendered");
      assert.deepEqual(last.marker_rendering, [trait]);
      assert.deepEqual(last.marker_found_in, { query: "test", field });
      assert.match(
        retrievalFinding(report).message,
        new RegExp(`rendered with ${describeRendering([trait])} rather than`),
      );
    });
  }
});

Deno.test("a deleted marker split across the answer's own fields is FAIL, and the finding says so", async () => {
  const { report } = await runFake({
    hook: (request, forward) => {
      if (request.op !== "query" || !inWindow(request, "test")) {
        return forward();
      }
      const m = String(request.body.query);
      return Promise.resolve({ text: m.slice(0, 20), rest: m.slice(20) });
    },
  });
  assert.equal(report.verdict, "FAIL");
  const last = report.samples.at(-1)!;
  assert.deepEqual(last.marker_rendering, ["split_items"]);
  assert.deepEqual(last.marker_found_in, { query: "test", field: "(answer)" });
  assert.match(
    retrievalFinding(report).message,
    /seen across the fields of the \/query answer rather than its text/,
  );
});
