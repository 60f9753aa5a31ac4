import assert from "node:assert/strict";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import {
  MIN_ANSWER_REDACTION_CHARS,
  REDACTED_TOKEN,
  tokenRedactor,
} from "../lib/http/_redact.ts";
import {
  answer,
  expectFailure,
  jsonResponse,
  rawResponse,
  testCertificate,
  withRawServer,
} from "./_tcp_servers.ts";

const BUDGET = { timeoutMs: 5000 };
// `/` and `+` are spelled differently in a URL's path and query.
const TOKEN = "s3cr3t/tok3n+h5-abc123";
const env = (name: string) => name === "STAGING_TOKEN" ? TOKEN : undefined;

function transportFor(url: string) {
  return createHttpTransport(
    { base_url: url, token_env: "STAGING_TOKEN" },
    { env, caCerts: [testCertificate()] },
  );
}

Deno.test("the token an adapter echoes as a key or value of its answer is redacted", async () => {
  const echoed = JSON.stringify({
    text: "nothing",
    ids: [`id-${TOKEN}`],
    [TOKEN]: { c: 1 },
    sources: [{ auth: `Bearer ${TOKEN}` }],
  });
  await withRawServer(answer(jsonResponse(echoed)), async (server) => {
    const result = await transportFor(server.url).post(
      "query",
      { namespace: "n", query: "q" },
      BUDGET,
    );
    assert.ok(!JSON.stringify(result).includes("tok3n"));
    assert.deepEqual(result, {
      text: "nothing",
      ids: [`id-${REDACTED_TOKEN}`],
      [REDACTED_TOKEN]: { c: 1 },
      sources: [{ auth: `Bearer ${REDACTED_TOKEN}` }],
    });
  }, { tls: true });
});

Deno.test("the token in a same-host redirect's Location is not repeated in the error", async () => {
  for (
    const location of [`/${TOKEN}/query`, `/${encodeURIComponent(TOKEN)}/query`]
  ) {
    const redirect = answer(
      rawResponse("307 Temporary Redirect", [
        `Location: ${location}`,
        "Content-Length: 0",
      ]),
    );
    await withRawServer(redirect, async (server) => {
      const error = await expectFailure(
        transportFor(server.url).post(
          "query",
          { namespace: "n", query: "q" },
          BUDGET,
        ),
        "redirect",
      );
      assert.ok(!error.message.includes("tok3n"), error.message);
      assert.match(error.message, /\[redacted token\]/);
    }, { tls: true });
  }
});

Deno.test("the token echoed as a Content-Encoding is not repeated in the error", async () => {
  const coded = answer(
    rawResponse("200 OK", [
      "Content-Type: application/json",
      `Content-Encoding: ${TOKEN.toLowerCase().replace(/[/+]/g, "-")}`,
      "Content-Length: 2",
    ], "{}"),
  );
  const token = TOKEN.toLowerCase().replace(/[/+]/g, "-");
  await withRawServer(coded, async (server) => {
    const transport = createHttpTransport(
      { base_url: server.url, token_env: "STAGING_TOKEN" },
      {
        env: (name) => name === "STAGING_TOKEN" ? token : undefined,
        caCerts: [testCertificate()],
      },
    );
    const error = await expectFailure(
      transport.post("delete", { ids: ["a"] }, BUDGET),
      "malformed_json",
    );
    assert.ok(!error.message.includes(token), error.message);
  }, { tls: true });
});

Deno.test("a token shorter than the answer bound is redacted in messages, never inside answers", () => {
  const short = "abc";
  assert.ok(short.length < MIN_ANSWER_REDACTION_CHARS);
  const redactor = tokenRedactor(short);
  // An answer is evidence: a marker holding "abc" by chance must stay whole.
  const evidence = { text: "trace_canary_xabcx" };
  assert.deepEqual(redactor.answer(evidence), evidence);
  const error = redactor.error(new Error("Location: /abc/query")) as Error;
  assert.equal(error.message, `Location: /${REDACTED_TOKEN}/query`);
});

Deno.test("without a token nothing is rewritten", () => {
  const redactor = tokenRedactor(undefined);
  const evidence = { text: "x", [REDACTED_TOKEN]: 1 };
  assert.equal(redactor.answer(evidence), evidence);
  assert.equal(redactor.text("Bearer"), "Bearer");
});

Deno.test("the token is redacted in any case and with any of its characters percent-encoded", () => {
  const redactor = tokenRedactor(TOKEN);
  for (
    const echo of [
      TOKEN.toLowerCase(),
      TOKEN.toUpperCase(),
      "s3cr3t%2ftok3n%2bh5-abc123",
      "s3cr3t%2Ftok3n%2Bh5-abc123",
      "%73%33cr3t/tok3n+h5-abc123",
    ]
  ) {
    assert.equal(
      redactor.text(`Location: https://h/${echo}/query`),
      `Location: https://h/${REDACTED_TOKEN}/query`,
      echo,
    );
    assert.deepEqual(redactor.answer({ [echo]: echo }), {
      [REDACTED_TOKEN]: REDACTED_TOKEN,
    });
  }
});
