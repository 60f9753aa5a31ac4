/** `trace init` and comments in config files. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../cli.ts";
import { starterConfig } from "../cli/init.ts";
import { parseStagingConfigText } from "../lib/contract/config.ts";
import { captureIo, withTempDir } from "./_helpers.ts";

Deno.test("trace init writes a commented config that external-plan reads as written", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "staging.json");
    const io = captureIo();
    assert.equal(await main(["init", path], io), 0, io.stderr());
    assert.match(io.stdout(), /^Wrote .*staging\.json\. Next:/);
    assert.match(io.stdout(), /trace external-plan --config /);
    const text = await Deno.readTextFile(path);
    assert.match(text, /^\/\/ /m);
    const plan = captureIo();
    assert.equal(
      await main(["external-plan", "--config", path, "--json"], plan),
      0,
      plan.stderr(),
    );
    assert.equal(JSON.parse(plan.stdout()).timing.document_count, 3);
  });
});

Deno.test("trace init refuses an existing file unless --force, and a refused base URL before writing", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "staging.json");
    await Deno.writeTextFile(path, "keep");
    const io = captureIo();
    assert.equal(await main(["init", path], io), 2);
    assert.match(
      io.stderr(),
      /the file already exists; choose another path or pass --force/,
    );
    assert.equal(await Deno.readTextFile(path), "keep");
    assert.equal(await main(["init", path, "--force"], captureIo()), 0);
    assert.notEqual(await Deno.readTextFile(path), "keep");
    const other = join(dir, "remote.json");
    const remote = captureIo();
    assert.equal(
      await main(
        ["init", other, "--base-url", "http://staging.example.com"],
        remote,
      ),
      2,
    );
    assert.match(
      remote.stderr(),
      /base_url: plain http:\/\/ is allowed only for loopback/,
    );
    await assert.rejects(() => Deno.stat(other), Deno.errors.NotFound);
  });
});

Deno.test("trace init --force never replaces a database", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "trace.db");
    const bytes = new TextEncoder().encode("SQLite format 3\u0000 and pages");
    await Deno.writeFile(path, bytes);
    const io = captureIo();
    assert.equal(await main(["init", path, "--force"], io), 2);
    assert.match(
      io.stderr(),
      /it is a SQLite database, which trace init never replaces \(not even with --force\)/,
    );
    assert.deepEqual(await Deno.readFile(path), bytes);
  });
});

Deno.test("parseStagingConfigText() reads // and /* */ comments but refuses an unterminated one", () => {
  const config = parseStagingConfigText(
    starterConfig("https://staging.example.com"),
  );
  assert.equal(config.base_url, "https://staging.example.com");
  assert.equal(config.token_env, undefined);
  assert.throws(
    () => parseStagingConfigText('{ /* "base_url": 1 '),
    /unterminated comment/,
  );
  // A comment marker inside a string is text, not a comment.
  assert.throws(
    () =>
      parseStagingConfigText(
        '{"base_url": "http://127.0.0.1//x", "environment": "staging", "allow_synthetic_writes": true, "bogus": 1}',
      ),
    /bogus/,
  );
});

Deno.test("trace init prints its next steps with the comments in one column, as shell comments", async () => {
  await withTempDir(async (dir) => {
    for (const name of ["staging.json", "my staging config.json"]) {
      const path = join(dir, name);
      const io = captureIo();
      assert.equal(await main(["init", path], io), 0, io.stderr());
      const commented = io.stdout().split("\n").filter((line) =>
        line.includes("#")
      );
      assert.equal(commented.length, 2, io.stdout());
      const columns = new Set(commented.map((line) => line.indexOf("  # ")));
      assert.equal(columns.size, 1, io.stdout());
      assert.ok(
        io.stdout().includes("  # what a run would do; nothing is sent\n"),
      );
      if (name.includes(" ")) {
        assert.ok(io.stdout().includes(`--config '${path}'`), io.stdout());
      }
    }
  });
});

Deno.test("trace init names a path with hidden characters escaped", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "staging\u001b[31m\u202e.json");
    const io = captureIo();
    assert.equal(await main(["init", path], io), 0, io.stderr());
    assert.ok(
      !io.stdout().includes("\u001b") && !io.stdout().includes("\u202e"),
      `a raw hidden character: ${JSON.stringify(io.stdout())}`,
    );
    assert.match(
      io.stdout(),
      /^Wrote .*staging\\u\{001b\}\[31m\\u\{202e\}\.json\. Next:/,
    );
  });
});

Deno.test("trace init --force refuses a directory, a FIFO and a symbolic link, and writes through none of them", async () => {
  await withTempDir(async (dir) => {
    const kept = join(dir, "kept.txt");
    await Deno.writeTextFile(kept, "keep");
    const link = join(dir, "link.json");
    await Deno.symlink(kept, link);
    const fifo = join(dir, "fifo.json");
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    const cases: [string, RegExp][] = [
      [dir, /it is a directory; name a file/],
      [link, /it is a symbolic link, which trace init never writes through/],
      [fifo, /it is not a regular file; name a file/],
    ];
    for (const [path, message] of cases) {
      for (const force of [[], ["--force"]]) {
        const io = captureIo();
        assert.equal(await main(["init", path, ...force], io), 2, path);
        assert.match(io.stderr(), message);
      }
    }
    assert.equal(await Deno.readTextFile(kept), "keep");
  });
});
