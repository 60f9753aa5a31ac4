/** `trace serve` and the UI: the one-time login URL and the start-up lines about signing in. */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import { captureIo, withTempDir } from "./_helpers.ts";

/** Runs `trace serve` until `fn` is done, then stops it like Ctrl-C. */
async function withServe(
  env: Record<string, string>,
  fn: (stderr: () => string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const stop = new AbortController();
    const io = { ...captureIo("", env), interrupted: stop.signal };
    const exit = main(
      ["serve", "--port", "0", "--data-dir", dir],
      io,
    );
    try {
      for (
        let i = 0;
        i < 2400 && !io.stderr().includes("UI admin token");
        i++
      ) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await fn(io.stderr);
    } finally {
      stop.abort();
      assert.equal(await exit, 0, io.stderr());
    }
  });
}

Deno.test("trace serve prints a login URL that works once, and says TRACE_UI_AUTH_TOKEN is unset", async () => {
  await withServe({}, async (stderr) => {
    const url =
      /UI login \(works once\): (http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)/
        .exec(stderr())?.[1];
    assert.ok(url, stderr());
    assert.match(
      stderr(),
      /UI admin token: none; set TRACE_UI_AUTH_TOKEN for scripts/,
    );
    const first = await fetch(url, { redirect: "manual" });
    assert.equal(first.status, 303);
    const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    await first.body?.cancel();
    const origin = new URL(url).origin;
    const page = await fetch(`${origin}/traces/health`, {
      headers: { cookie },
      redirect: "manual",
    });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Index health/);
    const second = await fetch(url, { redirect: "manual" });
    assert.equal(second.status, 410);
    await second.body?.cancel();
  });
});

Deno.test("trace serve names TRACE_UI_AUTH_TOKEN when set and accepts it as a bearer token", async () => {
  const token = "serve-admin-token-0123456789";
  await withServe({ TRACE_UI_AUTH_TOKEN: token }, async (stderr) => {
    assert.match(
      stderr(),
      /UI admin token: TRACE_UI_AUTH_TOKEN \(Authorization: Bearer/,
    );
    assert.doesNotMatch(
      stderr(),
      new RegExp(token),
      "the token is never printed",
    );
    const origin = /listening on (http:\/\/\S+) /.exec(stderr())![1]!;
    const response = await fetch(`${origin}/traces/health.json`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(response.status, 200);
    assert.equal((await response.json()).counters.state, "recorded");
  });
});

Deno.test("trace serve refuses a bad TRACE_UI_AUTH_TOKEN before touching the data directory", async () => {
  const short = captureIo("", { TRACE_UI_AUTH_TOKEN: "short" });
  assert.equal(await main(["serve", "--data-dir", "/nonexistent/x"], short), 2);
  assert.match(
    short.stderr(),
    /TRACE_UI_AUTH_TOKEN must be at least 16 characters/,
  );
  const same = captureIo("", {
    TRACE_UI_AUTH_TOKEN: "same-token-0123456789",
    TRACE_INGEST_TOKEN: "same-token-0123456789",
  });
  assert.equal(await main(["serve", "--data-dir", "/nonexistent/x"], same), 2);
  assert.match(same.stderr(), /must differ from TRACE_INGEST_TOKEN/);
});
