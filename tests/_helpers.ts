/** Shared test fixtures: temp dirs, databases, servers and CLI capture. */

import { main } from "../cli.ts";
import type { CliIo } from "../cli/_io.ts";
import {
  parseStagingConfig,
  type StagingConfig,
} from "../lib/contract/config.ts";
import { openDb, type TraceDb } from "../lib/db.ts";
import type { InStatement } from "@libsql/client";

/**
 * A valid staging config for fake-target tests: an unreachable loopback URL
 * (fakes never connect), a 2 s window sampled every 0.5 s, plus `overrides`.
 */
export function stagingConfig(
  overrides: Record<string, unknown> = {},
): StagingConfig {
  return parseStagingConfig({
    base_url: "http://127.0.0.1:1",
    environment: "staging",
    allow_synthetic_writes: true,
    deletion_window_seconds: 2,
    sample_interval_seconds: 0.5,
    ...overrides,
  });
}

/** Records `component` at schema `version`, as a newer build that upgraded its tables would. */
export async function markNewerSchema(
  db: TraceDb,
  component: string,
  version: number,
): Promise<void> {
  await db.client.execute({
    sql:
      "INSERT INTO schema_migrations VALUES (?, ?, 'from a newer build', '')",
    args: [component, version],
  });
}

/** Statements `db`'s own connection runs while `fn` runs, of those matching `pattern`. */
export async function statementsDuring(
  db: TraceDb,
  pattern: RegExp,
  fn: () => Promise<void>,
): Promise<string[]> {
  const client = db.client;
  const execute = client.execute.bind(client);
  const seen: string[] = [];
  client.execute = ((statement: InStatement) => {
    const sql = typeof statement === "string" ? statement : statement.sql;
    if (pattern.test(sql)) seen.push(sql);
    return execute(statement);
  }) as typeof client.execute;
  try {
    await fn();
  } finally {
    client.execute = execute;
  }
  return seen;
}

/** True when something (a file, a directory, a link) is at `path`. */
export async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withTempDir<T>(
  fn: (dir: string) => Promise<T>,
): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "trace-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * Registers, through the CLI, target `targetId` in `dataDir` whose
 * `token_env` names `variable`, which the caller leaves unset.
 */
export async function registerTokenTarget(
  dataDir: string,
  targetId: string,
  variable: string,
): Promise<void> {
  const config = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        base_url: "https://127.0.0.1:1",
        environment: "staging",
        allow_synthetic_writes: true,
        token_env: variable,
      }),
    );
    const io = captureIo();
    const code = await main([
      "external-register",
      "--target",
      targetId,
      "--config",
      config,
      "--data-dir",
      dataDir,
    ], io);
    if (code !== 0) throw new Error(io.stderr());
  } finally {
    await Deno.remove(config);
  }
}

/** Runs `fn` with a fresh local database in a temp data dir, closed afterwards. */
export async function withDb<T>(
  fn: (db: TraceDb, dataDir: string) => Promise<T>,
): Promise<T> {
  return await withTempDir(async (dir) => {
    const db = await openDb({ dataDir: dir });
    try {
      return await fn(db, dir);
    } finally {
      db.close();
    }
  });
}

/** A handler served on an ephemeral loopback port. */
export interface TestServer {
  url: string;
  port: number;
}

/** Serves `handler` on 127.0.0.1 with an ephemeral port, shut down afterwards. */
export async function withServer<T>(
  handler: Deno.ServeHandler,
  fn: (server: TestServer) => Promise<T>,
): Promise<T> {
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
  }, handler);
  const port = server.addr.port;
  try {
    return await fn({ url: `http://127.0.0.1:${port}`, port });
  } finally {
    await server.shutdown();
  }
}

/** The variable {@link serveWithoutTokenVariable}'s target names and its server lacks. */
export const UNSET_TOKEN_VARIABLE = "TRACE_TEST_UNSET_TOKEN";

/** What that server answers a run of the target: restart it with the variable set. */
export const SERVE_UNSET_TOKEN_REFUSAL =
  `Cannot read bearer token: environment variable ${UNSET_TOKEN_VARIABLE} is unset or empty; trace serve reads its environment once, when it starts: restart it with the variable set (${UNSET_TOKEN_VARIABLE}=… trace serve …)`;

/**
 * `trace serve` of `dataDir` with target `staging-token` registered, whose
 * `token_env` names {@link UNSET_TOKEN_VARIABLE}, started without it and
 * with `adminToken` as its UI token.
 */
export async function serveWithoutTokenVariable(
  dataDir: string,
  adminToken: string,
): Promise<Deno.Command> {
  await registerTokenTarget(dataDir, "staging-token", UNSET_TOKEN_VARIABLE);
  return serveCommand(dataDir, {
    unset: [
      "TRACE_INGEST_TOKEN",
      "TRACE_UI_AUTH_ACCOUNTS",
      UNSET_TOKEN_VARIABLE,
    ],
    env: { TRACE_UI_AUTH_TOKEN: adminToken },
  });
}

/** `trace serve` on an ephemeral port and `dataDir`, for {@link withListeningChild}. */
export function serveCommand(
  dataDir: string,
  options: {
    args?: string[];
    env?: Record<string, string>;
    /** Variables of this process the server must not see (an empty value is refused, not unset). */
    unset?: string[];
  } = {},
): Deno.Command {
  const env = options.unset
    ? { env: { ...envWithout(options.unset), ...options.env }, clearEnv: true }
    : options.env
    ? { env: options.env }
    : {};
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../cli.ts", import.meta.url).pathname,
      "serve",
      ...(options.args ?? []),
      "--port",
      "0",
      "--data-dir",
      dataDir,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    ...env,
  });
}

/** This process's environment without `names`, for a child started with `clearEnv`. */
export function envWithout(names: readonly string[]): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of names) delete env[name];
  return env;
}

/**
 * Spawns `command` (a server told to bind port 0, with piped stderr) and runs
 * `fn` with the URL it reports on stderr as `listening on URL`; the child is
 * stopped afterwards. The server picks its own port, so no other process can
 * take the port between choosing it and binding it.
 */
export async function withListeningChild<T>(
  command: Deno.Command,
  fn: (url: string, child: Deno.ChildProcess) => Promise<T>,
): Promise<T> {
  const child = command.spawn();
  const listening = Promise.withResolvers<string>();
  // Keep reading stderr for the child's whole life so it never blocks on a full pipe.
  const drained = (async () => {
    let seen = "";
    for await (
      const text of child.stderr.pipeThrough(new TextDecoderStream())
    ) {
      seen += text;
      const url = seen.match(/listening on (https?:\/\/[^\s;]+)/)?.[1];
      if (url !== undefined) listening.resolve(url);
    }
    listening.reject(new Error(`the server exited before listening: ${seen}`));
  })();
  try {
    return await fn(await listening.promise, child);
  } finally {
    try {
      child.kill("SIGTERM");
    } catch {
      // It has already exited.
    }
    await child.status;
    await drained;
    try {
      await child.stdout.cancel();
    } catch {
      // Its stdout was not piped.
    }
  }
}

const CLI = new URL("../cli.ts", import.meta.url).pathname;

/** A `trace` child process whose stderr can be awaited as it is written. */
export interface CliChild {
  child: Deno.ChildProcess;
  /** The stderr read so far. */
  seen(): string;
  /** Reads stderr until `pattern` matches what was read so far. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Waits for the exit and returns its status and stdout, reading the rest of stderr. */
  finish(): Promise<{ code: number; stdout: string }>;
}

/** Spawns `trace <args>` in a child process without colours, stdout and stderr piped. */
export function spawnCli(args: string[]): CliChild {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  return {
    child,
    seen: () => seen,
    async waitFor(pattern) {
      for (;;) {
        const match = seen.match(pattern);
        if (match) return match;
        const { value, done } = await stderr.read();
        if (done) throw new Error(`stderr ended before ${pattern}:\n${seen}`);
        seen += value;
      }
    },
    async finish() {
      const [status, stdout] = await Promise.all([
        child.status,
        new Response(child.stdout).text(),
        (async () => {
          for (;;) {
            const { value, done } = await stderr.read();
            if (done) break;
            seen += value;
          }
        })(),
      ]);
      return { code: status.code, stdout };
    },
  };
}

/** CLI streams captured in memory. */
export interface CapturedIo extends CliIo {
  stdout(): string;
  stderr(): string;
}

/** A {@link CliIo} that records output and serves `stdin` from a string. */
export function captureIo(
  stdin = "",
  env: Record<string, string> = {},
): CapturedIo {
  let out = "";
  let err = "";
  return {
    out: (text) => void (out += text),
    err: (text) => void (err += text),
    readStdin: (limit) => {
      const bytes = new TextEncoder().encode(stdin);
      return Promise.resolve(bytes.byteLength > limit ? null : bytes);
    },
    stderrIsTerminal: false,
    env: (name) => env[name],
    stdout: () => out,
    stderr: () => err,
  };
}

/** The README's event fixture (application app-1, user u-7), as a path. */
export const SUPPORT_TURN_EVENTS = new URL(
  "../fixtures/events/support_turn.ndjson",
  import.meta.url,
).pathname;

/** `trace ARGS` in process with `env` (and `stdin`): its exit code and output. */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
  stdin = "",
): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo(stdin, env);
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

/** The ids `trace external-targets --json` lists for the data flags `data`. */
export async function listedTargetIds(data: string[]): Promise<string[]> {
  const io = captureIo();
  const code = await main(["external-targets", "--json", ...data], io);
  if (code !== 0) {
    throw new Error(`external-targets exited ${code}: ${io.stderr()}`);
  }
  return JSON.parse(io.stdout()).targets.map((t: { target_id: string }) =>
    t.target_id
  );
}
