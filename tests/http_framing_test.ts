import assert from "node:assert/strict";
import type { RequestFailure } from "../lib/contract/protocol.ts";
import { MAX_RESPONSE_BYTES } from "../lib/http/http1.ts";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import {
  answer,
  type Behaviour,
  expectFailure,
  rawResponse,
  withRawServer,
} from "./_tcp_servers.ts";

const BUDGET = { timeoutMs: 5000 };
const OK = '{"acknowledged":true}';
const chunked = (body: string) =>
  rawResponse("200 OK", ["Transfer-Encoding: chunked"], body);

async function expectServerFailure(
  behaviour: Behaviour,
  failure: RequestFailure,
): Promise<void> {
  await withRawServer(behaviour, async (server) => {
    const transport = createHttpTransport({ base_url: server.url });
    await expectFailure(transport.post("delete", {}, BUDGET), failure);
    assert.equal(server.connections(), 1);
  });
}

Deno.test("http1Post() refuses bodies whose framing disagrees with the bytes", async (t) => {
  const cases: Array<[string, string]> = [
    [
      "Content-Length larger than the bytes sent",
      rawResponse("200 OK", ["Content-Length: 40"], OK),
    ],
    [
      "Content-Length smaller than the bytes sent",
      rawResponse("200 OK", ["Content-Length: 10"], OK),
    ],
    ["unterminated chunking (close mid-chunk)", chunked(`40\r\n${OK}`)],
    ["chunking without the last chunk", chunked(`15\r\n${OK}\r\n`)],
    ["malformed chunk size", chunked(`zz\r\n${OK}\r\n0\r\n\r\n`)],
    ["chunk data longer than declared", chunked(`10\r\n${OK}\r\n0\r\n\r\n`)],
    ["bytes after the last chunk", chunked(`15\r\n${OK}\r\n0\r\n\r\nextra`)],
    [
      "both Content-Length and Transfer-Encoding",
      rawResponse("200 OK", [
        "Content-Length: 21",
        "Transfer-Encoding: chunked",
      ], `15\r\n${OK}\r\n0\r\n\r\n`),
    ],
    [
      "differing Content-Length headers",
      rawResponse("200 OK", ["Content-Length: 21", "Content-Length: 22"], OK),
    ],
    [
      "differing Content-Length list",
      rawResponse("200 OK", ["Content-Length: 21, 20"], OK),
    ],
    [
      "non-numeric Content-Length",
      rawResponse("200 OK", ["Content-Length: +21"], OK),
    ],
    [
      "unsupported transfer coding",
      rawResponse("200 OK", ["Transfer-Encoding: gzip, chunked"], OK),
    ],
    [
      "no framing at all",
      rawResponse("200 OK", ["Content-Type: application/json"], OK),
    ],
    ["bare LF line endings", `HTTP/1.1 200 OK\nContent-Length: 21\n\n${OK}`],
    ["malformed status line", `HTTP/2 200\r\nContent-Length: 21\r\n\r\n${OK}`],
    [
      "folded header line",
      rawResponse("200 OK", ["X-A: 1", " folded", "Content-Length: 21"], OK),
    ],
    ["closed before headers end", "HTTP/1.1 200 OK\r\nContent-Length: 21\r\n"],
  ];
  for (const [name, response] of cases) {
    await t.step(name, () => expectServerFailure(answer(response), "framing"));
  }
});

Deno.test("an answer without framing says what the adapter must send", async () => {
  const response = rawResponse(
    "200 OK",
    ["Content-Type: application/json"],
    OK,
  );
  await withRawServer(answer(response), async (server) => {
    const transport = createHttpTransport({ base_url: server.url });
    const error = await expectFailure(
      transport.post("delete", {}, BUDGET),
      "framing",
    );
    assert.match(
      error.message,
      /neither Content-Length nor chunked encoding present; the adapter must send a Content-Length header or a chunked body/,
    );
  });
});

Deno.test("http1Post() accepts repeated identical Content-Length values", async () => {
  const response = rawResponse("200 OK", [
    "Content-Length: 21",
    "Content-Length: 21, 21",
  ], OK);
  await withRawServer(answer(response), async (server) => {
    const transport = createHttpTransport({ base_url: server.url });
    assert.deepEqual(await transport.post("delete", {}, BUDGET), {
      acknowledged: true,
    });
  });
});

Deno.test("http1Post() refuses a declared body over 1 MiB before reading it", async () => {
  const response = rawResponse("200 OK", [
    `Content-Length: ${MAX_RESPONSE_BYTES + 1}`,
  ]);
  await expectServerFailure(answer(response), "too_large");
});

Deno.test("http1Post() stops reading a chunked body once it passes 1 MiB", async () => {
  // Exactly one byte past the cap, and the body never ends: a client that
  // waited for the last chunk before checking the size would time out instead.
  const stream: Behaviour = async ({ write, waitForClose }) => {
    await write(rawResponse("200 OK", ["Transfer-Encoding: chunked"]));
    const chunk = `10000\r\n${"x".repeat(0x10000)}\r\n`;
    for (let sent = 0; sent < MAX_RESPONSE_BYTES; sent += 0x10000) {
      await write(chunk);
    }
    await write("1\r\nx\r\n");
    await waitForClose();
  };
  await expectServerFailure(stream, "too_large");
});

Deno.test("http1Post() accepts exactly 1 MiB of body", async () => {
  const body = `{"text":"${"y".repeat(MAX_RESPONSE_BYTES - 11)}"}`;
  assert.equal(body.length, MAX_RESPONSE_BYTES);
  const response = rawResponse(
    "200 OK",
    [`Content-Length: ${body.length}`],
    body,
  );
  await withRawServer(answer(response), async (server) => {
    const transport = createHttpTransport({ base_url: server.url });
    const result = await transport.post("query", {}, BUDGET);
    assert.equal((result.text as string).length, MAX_RESPONSE_BYTES - 11);
  });
});

Deno.test("http1Post() refuses headers over 64 KiB", async () => {
  const response = rawResponse("200 OK", [
    `X-Big: ${"h".repeat(70_000)}`,
    "Content-Length: 21",
  ], OK);
  await expectServerFailure(answer(response), "too_large");
});

Deno.test("http1Post() skips interim 1xx answers before the final one", async (t) => {
  const final = rawResponse("200 OK", ["Content-Length: 21"], OK);
  const cases: Array<[string, string]> = [
    ["100 Continue", "HTTP/1.1 100 Continue\r\n\r\n"],
    [
      "103 Early Hints with fields",
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n",
    ],
    [
      "several in a row",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n",
    ],
  ];
  for (const [name, interim] of cases) {
    await t.step(name, async () => {
      await withRawServer(answer(interim + final), async (server) => {
        const transport = createHttpTransport({ base_url: server.url });
        assert.deepEqual(await transport.post("delete", {}, BUDGET), {
          acknowledged: true,
        });
      });
    });
  }
});

Deno.test("http1Post() bounds interim answers by the head budget and refuses a 101", async () => {
  const endless: Behaviour = async ({ write, waitForClose }) => {
    const interim = "HTTP/1.1 100 Continue\r\n\r\n";
    // Past the 64 KiB head budget, then the client must have given up.
    for (let sent = 0; sent < 70_000; sent += interim.length) {
      await write(interim);
    }
    await waitForClose();
  };
  await expectServerFailure(endless, "too_large");
  const upgrade = rawResponse("101 Switching Protocols", [
    "Upgrade: websocket",
    "Connection: Upgrade",
  ]);
  await expectServerFailure(answer(upgrade), "http_status");
});
