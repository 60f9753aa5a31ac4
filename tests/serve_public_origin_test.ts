/**
 * `trace serve --public-origin` behind a TLS reverse proxy: the requests a
 * browser sends through nginx (its `Origin`, `Sec-Fetch-*`, and either the
 * forwarded `Host` or the upstream's), sent over a raw socket because
 * `fetch` will not send a `Host` of its own.
 */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import { parsePublicOrigin } from "../routes/_guard.ts";
import { captureIo, withTempDir } from "./_helpers.ts";

const PUBLIC = "https://trace.example.com";
const ADMIN = "proxy-admin-token-0123456789";
const INGEST = "ingest-token-0123456789abcdef";

/** Runs `trace serve` with `args` until `fn` is done, then stops it like Ctrl-C. */
async function withServe(
  args: string[],
  fn: (port: number, stderr: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const stop = new AbortController();
    const io = {
      ...captureIo("", {
        TRACE_UI_AUTH_TOKEN: ADMIN,
        TRACE_INGEST_TOKEN: INGEST,
      }),
      interrupted: stop.signal,
    };
    const exit = main(
      ["serve", "--port", "0", "--data-dir", dir, ...args],
      io,
    );
    try {
      for (let i = 0; i < 2400 && !io.stderr().includes("mcp: /mcp"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const port = /listening on http:\/\/127\.0\.0\.1:(\d+) /.exec(
        io.stderr(),
      )?.[1];
      assert.ok(port, io.stderr());
      await fn(Number(port), io.stderr());
    } finally {
      stop.abort();
      assert.equal(await exit, 0, io.stderr());
    }
  });
}

interface RawAnswer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** Sends one HTTP/1.1 request with exactly these headers and reads the answer to its end. */
async function rawRequest(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = "",
): Promise<RawAnswer> {
  const bytes = new TextEncoder().encode(body);
  const head = [
    `${method} ${path} HTTP/1.1`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ...(method === "GET" ? [] : [`Content-Length: ${bytes.byteLength}`]),
    "Connection: close",
    "",
    "",
  ].join("\r\n");
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(head));
    if (bytes.byteLength > 0) await conn.write(bytes);
    const answer = await new Response(conn.readable).text();
    return parseAnswer(answer);
  } catch (error) {
    try {
      conn.close();
    } catch {
      // Already closed by reading its stream to the end.
    }
    throw error;
  }
}

function parseAnswer(answer: string): RawAnswer {
  const split = answer.indexOf("\r\n\r\n");
  const lines = answer.slice(0, split).split("\r\n");
  const status = Number(lines[0]!.split(" ")[1]);
  const headers = lines.slice(1).map((line): [string, string] => {
    const colon = line.indexOf(":");
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
  });
  let body = answer.slice(split + 4);
  if (headers.some(([n, v]) => n === "transfer-encoding" && v === "chunked")) {
    body = dechunk(body);
  }
  return { status, headers, body };
}

function dechunk(body: string): string {
  let out = "";
  let rest = body;
  for (;;) {
    const end = rest.indexOf("\r\n");
    const size = parseInt(rest.slice(0, end), 16);
    if (!(size > 0)) return out;
    out += rest.slice(end + 2, end + 2 + size);
    rest = rest.slice(end + 2 + size + 2);
  }
}

function header(answer: RawAnswer, name: string): string | undefined {
  return answer.headers.find(([n]) => n === name)?.[1];
}

/** What a browser on the public origin sends through nginx, with the `Host` the proxy passes on. */
function browser(host: string, extra: Record<string, string> = {}) {
  return {
    Host: host,
    Origin: PUBLIC,
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-Mode": "navigate",
    ...extra,
  };
}

const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

/** `POST /login` with the admin token, as the login form sends it. */
function signIn(port: number, host: string): Promise<RawAnswer> {
  return rawRequest(
    port,
    "POST",
    "/login",
    browser(host, FORM),
    new URLSearchParams({ token: ADMIN, next: "/traces/health" }).toString(),
  );
}

Deno.test("parsePublicOrigin() takes an http(s) origin alone, https beyond loopback, and names what is wrong", async (t) => {
  for (
    const [value, origin, hostname, port] of [
      [
        "https://trace.example.com",
        "https://trace.example.com",
        "trace.example.com",
        "443",
      ],
      [
        "https://Trace.Example.com:443/",
        "https://trace.example.com",
        "trace.example.com",
        "443",
      ],
      [
        "https://trace.example.com:8443",
        "https://trace.example.com:8443",
        "trace.example.com",
        "8443",
      ],
      ["http://localhost:8080", "http://localhost:8080", "localhost", "8080"],
      ["http://127.0.0.1:9000/", "http://127.0.0.1:9000", "127.0.0.1", "9000"],
      ["http://[::1]", "http://[::1]", "[::1]", "80"],
    ] as const
  ) {
    await t.step(`accepts ${value}`, () => {
      assert.deepEqual(parsePublicOrigin(value), {
        origin,
        hostname,
        port,
        https: origin.startsWith("https:"),
      });
    });
  }
  for (
    const [value, message] of [
      ["trace.example.com", /is not an absolute URL/],
      ["ftp://trace.example.com", /is not an http:\/\/ or https:\/\/ URL/],
      ["https://trace.example.com/trace", /has a path/],
      ["https://trace.example.com/?", /has a query/],
      ["https://trace.example.com#top", /has a fragment/],
      ["http://trace.example.com", /must use https:\/\/ for a host beyond/],
    ] as const
  ) {
    await t.step(`refuses ${value}`, () => {
      assert.throws(
        () => parsePublicOrigin(value),
        (error: Error) => {
          assert.equal(error.name, "ConfigError");
          assert.match(error.message, message);
          assert.doesNotMatch(error.message, /\n/);
          return true;
        },
      );
    });
  }
  await t.step("never repeats credentials", () => {
    assert.throws(
      () => parsePublicOrigin("https://ops:hunter2-secret@trace.example.com"),
      (error: Error) => {
        assert.match(error.message, /must not hold a user name or password/);
        assert.doesNotMatch(error.message, /hunter2/);
        return true;
      },
    );
  });
});

Deno.test("trace serve refuses a bad or unguarded --public-origin in one line before touching files", async (t) => {
  for (
    const [origin, refusal] of [
      [
        "http://trace.example.com",
        'trace serve: --public-origin "http://trace.example.com" must use https:// for a host beyond loopback (the session cookie would cross the network in the clear); terminate TLS in the proxy and give its https:// origin\n',
      ],
      [
        // A proxy makes every client a loopback one: the API needs its token.
        "https://trace.example.com",
        "trace serve: Refusing --public-origin https://trace.example.com without TRACE_INGEST_TOKEN: through the proxy the API would be open to every client it reaches; set TRACE_INGEST_TOKEN\n",
      ],
    ] as const
  ) {
    await t.step(origin, async () => {
      await withTempDir(async (dir) => {
        const io = captureIo();
        const code = await main([
          "serve",
          "--port",
          "0",
          "--data-dir",
          `${dir}/data`,
          "--public-origin",
          origin,
        ], io);
        assert.equal(code, 2);
        assert.equal(io.stderr(), refusal);
        assert.deepEqual([...Deno.readDirSync(dir)], []);
      });
    });
  }
});

Deno.test("trace serve --public-origin: a browser behind the proxy signs in by POST, writes with its CSRF token and signs out, with a Secure cookie", async () => {
  await withServe(["--public-origin", PUBLIC], async (port, stderr) => {
    assert.match(
      stderr,
      /public origin: https:\/\/trace\.example\.com \(for browsers through the proxy: its Host and Origin are accepted, the session cookie is trace_session_443 and Secure\)/,
    );
    assert.match(
      stderr,
      /UI login \(works once\): https:\/\/trace\.example\.com\/login\?token=/,
    );
    // nginx with `proxy_set_header Host $host`, and with its default (the upstream's address).
    for (const host of ["trace.example.com", `127.0.0.1:${port}`]) {
      const login = await signIn(port, host);
      assert.equal(login.status, 303, `${host}: ${login.body}`);
      assert.equal(header(login, "location"), "/traces/health");
      const setCookie = header(login, "set-cookie")!;
      assert.match(setCookie, /; Secure/, setCookie);
      assert.match(setCookie, /; HttpOnly/, setCookie);
      const cookie = setCookie.split(";")[0]!;
      // Named by the port of the origin the browser is on: the public one
      // through `$host`, the listener's when the upstream's address is passed.
      const name = host === "trace.example.com"
        ? "trace_session_443"
        : `trace_session_${port}`;
      assert.ok(cookie.startsWith(`${name}=`), cookie);

      const page = await rawRequest(
        port,
        "GET",
        "/traces/health",
        browser(host, { Cookie: cookie }),
      );
      assert.equal(page.status, 200, `${host}: ${page.body.slice(0, 300)}`);
      // The empty index's command names the origin the reader's browser uses.
      assert.match(
        page.body,
        /trace demo --trace-to https:\/\/trace\.example\.com[^:\w.]/,
      );
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
      assert.ok(csrf, "the page carries its session's CSRF token");

      const dryRun = JSON.stringify({
        subject: { application_id: "app-1", user_id: "user-1" },
      });
      const json = { "Content-Type": "application/json", Cookie: cookie };
      const withoutToken = await rawRequest(
        port,
        "POST",
        "/api/erasures",
        browser(host, { ...json, "Sec-Fetch-Mode": "cors" }),
        dryRun,
      );
      assert.equal(withoutToken.status, 403, withoutToken.body);
      assert.match(withoutToken.body, /CSRF token is missing/);
      const write = await rawRequest(
        port,
        "POST",
        "/api/erasures",
        browser(host, {
          ...json,
          "Sec-Fetch-Mode": "cors",
          "X-CSRF-Token": csrf,
        }),
        dryRun,
      );
      assert.equal(write.status, 200, `${host}: ${write.body}`);
      assert.match(write.body, /"confirmation"/);

      const logout = await rawRequest(
        port,
        "POST",
        "/logout",
        browser(host, { ...FORM, Cookie: cookie }),
        new URLSearchParams({ _csrf: csrf }).toString(),
      );
      assert.equal(logout.status, 303, `${host}: ${logout.body}`);
      assert.equal(header(logout, "location"), "/login?signed_out");
      assert.match(header(logout, "set-cookie")!, /Max-Age=0.*; Secure/);
      assert.ok(header(logout, "set-cookie")!.startsWith(`${name}=;`));
      const after = await rawRequest(
        port,
        "GET",
        "/traces/health",
        browser(host, { Cookie: cookie }),
      );
      assert.equal(after.status, 303, "the session ended");
    }

    // A browser without Fetch Metadata is judged by its Referer: the public origin is this server's.
    const linked = await rawRequest(port, "GET", `/login?token=${ADMIN}`, {
      Host: `127.0.0.1:${port}`,
      Referer: `${PUBLIC}/login`,
    });
    assert.equal(linked.status, 303, linked.body);

    // DNS rebinding is still refused: any other host, or the public host on another port.
    for (const host of ["evil.example", "trace.example.com:8443"]) {
      const refused = await signIn(port, host);
      assert.equal(refused.status, 403, host);
      assert.match(refused.body, /is not served here/);
    }
    // On the public host only the public origin, scheme included.
    for (
      const origin of [
        "https://evil.example",
        "http://trace.example.com",
        "http://trace.example.com:443",
      ]
    ) {
      const otherOrigin = await rawRequest(
        port,
        "POST",
        "/login",
        browser("trace.example.com", { ...FORM, Origin: origin }),
        new URLSearchParams({ token: ADMIN }).toString(),
      );
      assert.equal(otherOrigin.status, 403, origin);
      assert.match(otherOrigin.body, /Cross-origin requests are refused/);
    }
  });
});

Deno.test("trace serve without --public-origin refuses what a browser behind the proxy sends", async () => {
  await withServe([], async (port, stderr) => {
    assert.doesNotMatch(stderr, /public origin/);
    const upstream = await signIn(port, `127.0.0.1:${port}`);
    assert.equal(upstream.status, 403);
    assert.match(
      upstream.body,
      /Cross-origin requests are refused: .*start trace serve with --public-origin/,
    );
    const forwarded = await signIn(port, "trace.example.com");
    assert.equal(forwarded.status, 403);
    assert.match(forwarded.body, /is not served here/);
    // Direct on loopback, the cookie is not Secure: the browser speaks plain http.
    const direct = await rawRequest(
      port,
      "POST",
      "/login",
      {
        Host: `127.0.0.1:${port}`,
        Origin: `http://127.0.0.1:${port}`,
        "Sec-Fetch-Site": "same-origin",
        ...FORM,
      },
      new URLSearchParams({ token: ADMIN }).toString(),
    );
    assert.equal(direct.status, 303, direct.body);
    assert.doesNotMatch(header(direct, "set-cookie")!, /Secure/);
  });
});
