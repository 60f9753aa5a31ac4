/**
 * The bounds `trace serve` puts on connections (`routes/listen.ts`) and on
 * request bodies (`routes/_body.ts`), seen from a raw TCP client. Each
 * trickling client would need seconds to finish what it sends; the bounds
 * are a fraction of that, and the tests check that the server closed the
 * connection before the client was done, never how long it took.
 */

import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import type { TraceDb } from "../lib/db.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";
import {
  type GuardedServer,
  listenGuarded,
  type ServeLimits,
} from "../routes/listen.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function withGuarded(
  limits: Partial<ServeLimits>,
  fn: (server: GuardedServer, db: TraceDb) => Promise<void>,
  uiAuthToken?: string,
) {
  const bodyTimeoutMs = limits.bodyTimeoutMs ?? 60_000;
  await withDb(async (db) => {
    await initializeObs(db);
    const app = createApp({
      db,
      log: () => {},
      ...(uiAuthToken ? { uiAuthToken } : {}),
      bodyLimits: {
        maxBytes: 1024 * 1024,
        maxDecodedBytes: 1024 * 1024,
        timeoutMs: bodyTimeoutMs,
      },
    });
    const server = await listenGuarded(app.fetch, {
      hostname: "127.0.0.1",
      port: 0,
      limits,
    });
    try {
      await fn(server, db);
    } finally {
      await server.shutdown();
    }
  });
}

interface Trickle {
  /** Bytes the client got to send before the server closed. */
  sent: number;
  /** Bytes the client had sent when the first byte of the answer arrived. */
  sentBeforeAnswer: number;
  /** Everything the server answered. */
  answer: string;
}

/** Sends `head` at once, then `trickle` one byte every `gapMs`, until done or closed. */
async function trickle(
  port: number,
  head: string,
  trickled: string,
  gapMs = 50,
): Promise<Trickle> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let answer = "";
  let closed = false;
  let sent = 0;
  let sentBeforeAnswer = -1;
  const reading = (async () => {
    const buffer = new Uint8Array(4096);
    try {
      for (;;) {
        const n = await conn.read(buffer);
        if (n === null) break;
        if (sentBeforeAnswer < 0) sentBeforeAnswer = sent;
        answer += decoder.decode(buffer.subarray(0, n));
      }
    } catch {
      // Reset by the server.
    }
    closed = true;
  })();
  try {
    if (head) await conn.write(encoder.encode(head));
    for (const char of trickled) {
      if (closed) break;
      await new Promise((resolve) => setTimeout(resolve, gapMs));
      if (closed) break;
      await conn.write(encoder.encode(char));
      sent++;
    }
  } catch {
    // Writing to a connection the server closed.
  }
  if (!closed) {
    // The client is done: give the server its turn to answer, then stop.
    await Promise.race([
      reading,
      new Promise((resolve) => setTimeout(resolve, 2_000)),
    ]);
  }
  try {
    conn.close();
  } catch {
    // Already closed.
  }
  await reading;
  return { sent, sentBeforeAnswer, answer };
}

const HEAD =
  "POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Padding: " +
  "a".repeat(100) + "\r\n\r\n";

Deno.test("a client that trickles its request head is answered 408 and closed within the head bound", async () => {
  await withGuarded({ headerTimeoutMs: 300 }, async (server) => {
    // 150 bytes at 50 ms each would take 7.5 s; the bound is 0.3 s.
    const result = await trickle(server.addr.port, "", HEAD);
    assert.ok(result.sent < HEAD.length / 2, `sent ${result.sent} bytes`);
    assert.match(result.answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  });
});

Deno.test("an idle connection is closed at the head bound", async () => {
  await withGuarded({ headerTimeoutMs: 200 }, async (server) => {
    const result = await trickle(server.addr.port, "", "");
    assert.match(result.answer, /^HTTP\/1\.1 408 /);
  });
});

Deno.test("a client that trickles its body is answered 408 and closed within the body bound", async () => {
  const body = JSON.stringify([{ x: "y".repeat(200) }]);
  const head = HEAD.replace(
    "\r\n\r\n",
    `\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  await withGuarded({ bodyTimeoutMs: 300 }, async (server, db) => {
    // 210 bytes at 50 ms each would take 10 s; the bound is 0.3 s (and 1 s
    // more for the 408 to pass).
    const result = await trickle(server.addr.port, head, body);
    assert.ok(result.sent < body.length / 2, `sent ${result.sent} bytes`);
    assert.match(result.answer, /^HTTP\/1\.1 408 /);
    assert.match(result.answer, /"code":"request_timeout"/);
    const stored = await db.client.execute(
      "SELECT COUNT(*) AS n FROM obs_events",
    );
    assert.equal(Number(stored.rows[0]!.n), 0);
  });
});

Deno.test("a sign-in or UI write whose chunked body trickles is answered 408 and closed within the body bound", async () => {
  // One byte a chunk, a character every 10 ms: 560 would take 5.6 s; the bound is 0.3 s.
  const chunks = "1\r\nt\r\n".repeat(80);
  const admin = "admin-token-0123456789abcdef";
  const bearer = `Authorization: Bearer ${admin}\r\n`;
  await withGuarded({ bodyTimeoutMs: 300 }, async (server) => {
    for (
      const [path, type, credentials] of [
        ["/login", "application/x-www-form-urlencoded", ""],
        ["/logout", "application/x-www-form-urlencoded", ""],
        ["/traces/reveal", "application/json", bearer],
        ["/api/erasures", "application/json", bearer],
      ] as const
    ) {
      const head =
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\n${credentials}Transfer-Encoding: chunked\r\n\r\n`;
      const result = await trickle(server.addr.port, head, chunks, 10);
      // Answered while the client was still sending, and closed before it was done.
      assert.ok(
        result.sentBeforeAnswer >= 0 &&
          result.sentBeforeAnswer < chunks.length / 2,
        `${path}: answered after ${result.sentBeforeAnswer} bytes`,
      );
      assert.ok(result.sent < chunks.length, `${path}: sent ${result.sent}`);
      assert.match(result.answer, /^HTTP\/1\.1 408 /, path);
      assert.match(
        result.answer,
        /did not arrive in time; send it at once, or send a smaller body/,
        path,
      );
    }
  }, admin);
});

/** Sends `request` at once, half-closes, and returns the whole answer. */
async function sendAndHalfClose(
  port: number,
  request: string,
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(encoder.encode(request));
    await conn.closeWrite();
    let answer = "";
    const buffer = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      answer += decoder.decode(buffer.subarray(0, n));
    }
    return answer;
  } finally {
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
}

Deno.test("a client that half-closes after a whole request still gets its answer; one that stops mid-body gets an end", async () => {
  await withGuarded({}, async (server) => {
    const port = server.addr.port;
    const get = await sendAndHalfClose(
      port,
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    );
    assert.match(get, /^HTTP\/1\.1 200 /);
    const body = JSON.stringify([{
      event_id: "e-1",
      application_id: "app-1",
      agent_id: "agent-1",
      kind: "retrieval",
    }]);
    const post = await sendAndHalfClose(
      port,
      `POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    assert.match(post, /^HTTP\/1\.1 200 /);
    const chunked = await sendAndHalfClose(
      port,
      `POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${
        body.length.toString(16)
      }\r\n${body}\r\n0\r\n\r\n`,
    );
    assert.match(chunked, /^HTTP\/1\.1 200 /);
    // Half of a body, then the client stops: the exchange ends (an answer
    // or a close), without waiting for the request bound.
    await sendAndHalfClose(
      port,
      `POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${
        body.slice(0, 10)
      }`,
    );
  });
});

Deno.test("connections past the cap are answered 503 while the others stay open", async () => {
  await withGuarded(
    { maxConnections: 2, headerTimeoutMs: 10_000 },
    async (server) => {
      const port = server.addr.port;
      const held = [
        await Deno.connect({ hostname: "127.0.0.1", port }),
        await Deno.connect({ hostname: "127.0.0.1", port }),
      ];
      try {
        // Let the guard accept both before the third arrives.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const third = await trickle(port, "", "");
        assert.match(third.answer, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
        assert.match(third.answer, /Retry-After: 1/);
      } finally {
        for (const conn of held) conn.close();
      }
      // Once they are gone, requests are served again.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(response.status, 200);
      await response.body?.cancel();
    },
  );
});

/** A raw answer cut into its status, headers (lower-case names) and body. */
function parseAnswer(answer: string): {
  status: number;
  headers: Map<string, string>;
  body: string;
} {
  const end = answer.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = answer.slice(0, end).split("\r\n");
  const headers = new Map(lines.map((line) => {
    const colon = line.indexOf(":");
    return [
      line.slice(0, colon).toLowerCase(),
      line.slice(colon + 1).trim(),
    ] as const;
  }));
  return {
    status: Number(statusLine!.split(" ")[1]),
    headers,
    body: answer.slice(end + 4),
  };
}

/** Checks the guard's refusal: the app's JSON error under the API, one line of text for pages. */
function assertRefusal(
  answer: string,
  expected: { status: number; code: string; json: boolean; said: RegExp },
  what: string,
): void {
  const { status, headers, body } = parseAnswer(answer);
  assert.equal(status, expected.status, what);
  assert.equal(headers.get("connection"), "close", what);
  assert.equal(
    Number(headers.get("content-length")),
    encoder.encode(body).length,
    what,
  );
  if (expected.json) {
    assert.equal(headers.get("content-type"), "application/json", what);
    const parsed = JSON.parse(body);
    assert.deepEqual(Object.keys(parsed), ["error"], what);
    assert.equal(parsed.error.code, expected.code, what);
    assert.match(parsed.error.message, expected.said, what);
    assert.doesNotMatch(parsed.error.message, /\n/, what);
  } else {
    assert.equal(
      headers.get("content-type"),
      "text/plain; charset=utf-8",
      what,
    );
    assert.match(body, /^[^\n]+\n$/, what);
    assert.match(body.trimEnd(), expected.said, what);
  }
}

Deno.test("a head past the size bound is answered 431 as the app's JSON error under the API, as one line of text for pages", async () => {
  const cases = [
    ["/api/events", true],
    ["/v1/traces", true],
    ["/mcp", true],
    ["/traces/find.json?q=x", true],
    ["http://127.0.0.1/api/events", true],
    ["/traces/find?q=x", false],
    ["/healthz", false],
    ["/apiary", false],
  ] as const;
  await withGuarded({ maxHeadBytes: 1024 }, async (server) => {
    for (const [target, json] of cases) {
      const result = await trickle(
        server.addr.port,
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${
          "b".repeat(2048)
        }\r\n\r\n`,
        "",
      );
      assertRefusal(result.answer, {
        status: 431,
        code: "request_header_fields_too_large",
        json,
        said:
          /^Cannot read the request: its head is longer than 1 KiB; send fewer or shorter headers/,
      }, target);
      assert.doesNotMatch(
        result.answer,
        /X-Big|bbbb/,
        "nothing of the request comes back",
      );
    }
  });
});

Deno.test("a head that does not arrive in time is answered 408 as the app's JSON error once its path is under the API", async () => {
  const cases = [
    // The request line arrived: its path decides.
    ["POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n", true],
    ["GET /traces/inspect.json?root_trace_id=r HTTP/1.1\r\n", true],
    ["GET /traces/find HTTP/1.1\r\n", false],
    // Part of the target arrived: a prefix that decides it counts, no other.
    ["POST /v1/tra", true],
    ["POST /ap", false],
    ["", false],
    // Bytes that are no request line.
    ["\u0000\u00ff\r\n\r", false],
  ] as const;
  await withGuarded({ headerTimeoutMs: 300 }, async (server) => {
    for (const [head, json] of cases) {
      const result = await trickle(
        server.addr.port,
        head,
        "X-Slow: 1234567890",
      );
      assertRefusal(result.answer, {
        status: 408,
        code: "request_timeout",
        json,
        said:
          /^Cannot read the request: its head did not arrive within 0\.3 s; send the request line and headers at once$/,
      }, JSON.stringify(head));
    }
  });
});

Deno.test("a request line longer than the guard reads for its path is still answered, by the part it read", async () => {
  await withGuarded({ maxHeadBytes: 16 * 1024 }, async (server) => {
    for (const [prefix, json] of [["/api/", true], ["/", false]] as const) {
      const result = await trickle(
        server.addr.port,
        `GET ${prefix}${"a".repeat(16 * 1024)} HTTP/1.1\r\n\r\n`,
        "",
      );
      assertRefusal(result.answer, {
        status: 431,
        code: "request_header_fields_too_large",
        json,
        said: /longer than 16 KiB/,
      }, prefix);
    }
  });
});

Deno.test("requests pass the guard unchanged, each on a connection of its own", async () => {
  await withGuarded({}, async (server) => {
    const base = `http://127.0.0.1:${server.addr.port}`;
    const post = await fetch(`${base}/api/events`, {
      method: "POST",
      headers: { "content-type": "application/json", connection: "keep-alive" },
      body: JSON.stringify([{
        event_id: "e-1",
        application_id: "app-1",
        agent_id: "agent-1",
        kind: "retrieval",
      }]),
    });
    assert.equal(post.status, 200);
    assert.equal(post.headers.get("connection"), "close");
    assert.equal((await post.json()).inserted, 1);
    for (let i = 0; i < 3; i++) {
      const page = await fetch(`${base}/api/events?application_id=app-1`);
      assert.equal((await page.json()).events.length, 1);
    }
    const foreign = await trickle(
      server.addr.port,
      "GET /healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n",
      "",
    );
    assert.match(
      foreign.answer,
      /^HTTP\/1\.1 403 /,
      "the app's Host guard sees the client's Host",
    );
  });
});
