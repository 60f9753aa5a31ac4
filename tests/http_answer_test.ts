/**
 * What an adapter author reads when an answer is refused: the JSON problem
 * in words, the content coding, `token_env` on 401/403, a redirect's
 * Location, and a leading byte order mark that is simply accepted.
 */

import assert from "node:assert/strict";
import type { Operation } from "../lib/contract/protocol.ts";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import {
  answer,
  expectFailure,
  jsonResponse,
  rawResponse,
  type RawServer,
  testCertificate,
  withRawServer,
} from "./_tcp_servers.ts";

const BUDGET = { timeoutMs: 5000 };
const encoder = new TextEncoder();

/** An empty-bodied `op` request to `server` from a client with no token. */
function post(server: RawServer, op: Operation): Promise<unknown> {
  return createHttpTransport({ base_url: server.url }).post(op, {}, BUDGET);
}

function bytesResponse(fields: string[], body: Uint8Array): Uint8Array {
  const head = encoder.encode(
    rawResponse("200 OK", [...fields, `Content-Length: ${body.length}`]),
  );
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head);
  bytes.set(body, head.length);
  return bytes;
}

Deno.test("a refused JSON answer says in words what was wrong and what to send", async (t) => {
  const cases: Array<[string, RegExp]> = [
    [
      "[1]",
      /^Request \/delete failed: the answer is JSON but not an object \(an array, string, number or null\); answer with one JSON object$/,
    ],
    [
      '{"acknowledged":true,"acknowledged":true}',
      /the answer repeats a key; send each key once \(duplicate key "acknowledged" at line 1, column 22\)$/,
    ],
    [
      '{"acknowledged":true} {}',
      /the answer has more after its JSON object; send exactly one object \(unexpected data after the value at line 1, column 23\)$/,
    ],
    ["", /failed: the answer's body is empty; answer with one JSON object$/],
    [
      "{acknowledged:true}",
      /the answer is not valid JSON \(expected a string key at line 1, column 2\)$/,
    ],
  ];
  for (const [body, message] of cases) {
    await t.step(JSON.stringify(body), async () => {
      await withRawServer(answer(jsonResponse(body)), async (server) => {
        const call = post(server, "delete");
        const error = await expectFailure(call, "malformed_json");
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /not_object|duplicate_key|_data/);
      });
    });
  }
});

Deno.test("a repeated key is named only when it is a field name: a key that may be answer text never reaches the report", async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "a value in a key",
      '{"text":"no","user@example.com":1,"user@example.com":2}',
      /the answer repeats a key; send each key once \(a repeated key that is not a field name at line 1, column 35\)$/,
    ],
    [
      "a marker in a key",
      '{"hits":{"trace_canary_7h3k q9":1,"trace_canary_7h3k q9":2}}',
      /\(a repeated key that is not a field name at line 1, column 35\)$/,
    ],
  ];
  for (const [name, body, message] of cases) {
    await t.step(name, async () => {
      await withRawServer(answer(jsonResponse(body)), async (server) => {
        const error = await expectFailure(
          post(server, "query"),
          "malformed_json",
        );
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /example|canary/);
      });
    });
  }
});

Deno.test("an answer that starts with a UTF-8 byte order mark is read as its JSON", async () => {
  const body = new Uint8Array([
    0xef,
    0xbb,
    0xbf,
    ...encoder.encode('{"acknowledged":true}'),
  ]);
  await withRawServer(answer(bytesResponse([], body)), async (server) => {
    const result = await post(server, "delete");
    assert.deepEqual(result, { acknowledged: true });
  });
  // Only one, at the start: a second mark is not JSON.
  const twice = new Uint8Array([0xef, 0xbb, 0xbf, ...body]);
  await withRawServer(answer(bytesResponse([], twice)), async (server) => {
    await expectFailure(
      post(server, "delete"),
      "malformed_json",
    );
  });
});

Deno.test("a compressed answer names its Content-Encoding instead of calling it invalid UTF-8", async () => {
  const gzipped = new Uint8Array(
    await new Response(
      new Blob(['{"acknowledged":true}']).stream().pipeThrough(
        new CompressionStream("gzip"),
      ),
    ).arrayBuffer(),
  );
  const reply = answer(bytesResponse(["Content-Encoding: gzip"], gzipped));
  await withRawServer(reply, async (server) => {
    const error = await expectFailure(
      post(server, "delete"),
      "malformed_json",
    );
    assert.match(
      error.message,
      /^Request \/delete failed: the answer is compressed \(Content-Encoding: gzip\) though Trace asked for Accept-Encoding: identity; send the JSON uncompressed: check the server's compression middleware and the Content-Encoding header$/,
    );
    assert.doesNotMatch(error.message, /UTF-8/);
    // Asked for identity, so a compliant server never compresses.
    assert.equal(
      server.requests[0]?.headers.get("accept-encoding"),
      "identity",
    );
  });
  const identity = bytesResponse(
    ["Content-Encoding: identity"],
    encoder.encode('{"acknowledged":true}'),
  );
  await withRawServer(answer(identity), async (server) => {
    assert.deepEqual(
      await post(server, "delete"),
      { acknowledged: true },
    );
  });
});

Deno.test("invalid UTF-8 still says so, with what to send", async () => {
  const body = new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]);
  await withRawServer(answer(bytesResponse([], body)), async (server) => {
    const error = await expectFailure(
      post(server, "delete"),
      "malformed_json",
    );
    assert.match(error.message, /not valid UTF-8 text; send the JSON object/);
  });
});

const refusal = (status: string) =>
  answer(rawResponse(status, ["Content-Length: 0"]));

Deno.test("a 401 or 403 without a token says to set token_env", async () => {
  for (const status of ["401 Unauthorized", "403 Forbidden"]) {
    await withRawServer(refusal(status), async (server) => {
      const error = await expectFailure(
        post(server, "inventory"),
        "http_status",
      );
      assert.match(
        error.message,
        new RegExp(
          `^Request /inventory failed: HTTP ${status}, expected 200: no bearer token was sent, since Trace sends one \\(token_env\\) only over https://; serve the adapter over https and set token_env`,
        ),
      );
    });
  }
  await withRawServer(refusal("401 Unauthorized"), async (server) => {
    const transport = createHttpTransport({ base_url: server.url }, {
      caCerts: [testCertificate()],
    });
    const error = await expectFailure(
      transport.post("inventory", {}, BUDGET),
      "http_status",
    );
    assert.match(
      error.message,
      /no bearer token was sent; set token_env in the config to the name of the environment variable that holds the adapter's token$/,
    );
  }, { tls: true });
});

Deno.test("a 401 with a token names the variable it came from, never the token", async () => {
  const token = "tok-7f3a9c-secret";
  await withRawServer(refusal("401 Unauthorized"), async (server) => {
    const transport = createHttpTransport({
      base_url: server.url,
      token_env: "STAGING_TOKEN",
    }, {
      caCerts: [testCertificate()],
      env: (name) => name === "STAGING_TOKEN" ? token : undefined,
    });
    const error = await expectFailure(
      transport.post("delete", {}, BUDGET),
      "http_status",
    );
    assert.equal(error.status, 401);
    assert.match(
      error.message,
      /HTTP 401 Unauthorized, expected 200: the adapter refused the bearer token from the environment variable STAGING_TOKEN \(token_env\); check that it holds the token the adapter expects/,
    );
    assert.ok(!error.message.includes(token));
  }, { tls: true });
});

Deno.test("other statuses keep their short words", async () => {
  await withRawServer(refusal("500 Internal Server Error"), async (server) => {
    const error = await expectFailure(
      post(server, "query"),
      "http_status",
    );
    assert.equal(
      error.message,
      "Request /query failed: HTTP 500, expected 200",
    );
  });
});

Deno.test("a status for a path the server does not serve names the URL and base_url", async () => {
  for (
    const status of [
      "404 Not Found",
      "405 Method Not Allowed",
      "501 Not Implemented",
    ]
  ) {
    await withRawServer(refusal(status), async (server) => {
      const error = await expectFailure(post(server, "query"), "http_status");
      assert.equal(
        error.message,
        `Request /query failed: HTTP ${
          status.slice(0, 3)
        } from POST ${server.url}/query, expected 200: check that base_url points at the trace-staging/1 adapter, which answers POST base_url/ingest, /query, /inventory and /delete`,
      );
    });
  }
});

Deno.test("a redirect shows where it pointed and the base_url to set, without the query", async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "absolute, ending in the operation",
      "http://127.0.0.1:9/v2/ingest?session=s3cret#x",
      /redirected with HTTP 307; redirects are never followed \(Location: http:\/\/127\.0\.0\.1:9\/v2\/ingest\); set base_url to http:\/\/127\.0\.0\.1:9\/v2$/,
    ],
    [
      "relative",
      "/api/ingest",
      /\(Location: http:\/\/127\.0\.0\.1:\d+\/api\/ingest\); set base_url to http:\/\/127\.0\.0\.1:\d+\/api$/,
    ],
    [
      "elsewhere",
      "https://login.example/sso?next=%2F",
      /\(Location: https:\/\/login\.example, another host or plain http\); set base_url to the adapter's own URL, after checking where that redirect points$/,
    ],
    [
      // A hostile adapter gets no base_url advice toward another host, and a path there may be a secret link.
      "another host, ending in the operation",
      "http://collector.example/magic-s3cret/ingest",
      /\(Location: http:\/\/collector\.example, another host or plain http\); set base_url to the adapter's own URL, after checking where that redirect points$/,
    ],
  ];
  for (const [name, location, message] of cases) {
    await t.step(name, async () => {
      const reply = answer(rawResponse("307 Temporary Redirect", [
        `Location: ${location}`,
        "Content-Length: 0",
      ]));
      await withRawServer(reply, async (server) => {
        const error = await expectFailure(
          post(server, "ingest"),
          "redirect",
        );
        assert.equal(error.status, 307);
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /s3cret|next=/);
      });
    });
  }
  await t.step("without a Location", async () => {
    const reply = answer(rawResponse("308 Permanent Redirect", [
      "Content-Length: 0",
    ]));
    await withRawServer(reply, async (server) => {
      const error = await expectFailure(
        post(server, "ingest"),
        "redirect",
      );
      assert.match(
        error.message,
        /\(the answer had no usable Location\); set base_url to the adapter's own URL$/,
      );
    });
  });
});
