/**
 * Posts one denial-of-service body through `createApp(...).request` in a
 * process of its own and prints `{status, code, rss_growth_mb}` as JSON, so
 * a test can check the answer and the memory it cost without other tests'
 * allocations in the same process. Usage: `deno run -A tests/_obs_dos.ts
 * otlp-protobuf|otlp-json|ndjson|json-array`.
 *
 * Resident memory growth is the peak (`VmHWM`, where /proc has it, else the
 * RSS after the answer) minus the RSS once the body is built.
 *
 * @module
 */

import { openDb } from "../lib/db.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";

/** The bodies, each under every byte limit once inflated. */
export const DOS_BODIES = [
  "otlp-protobuf",
  "otlp-json",
  "ndjson",
  "json-array",
] as const;
type DosBody = typeof DOS_BODIES[number];

async function gzip(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 128) {
    out.push((n % 128) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

/** A length-delimited protobuf field holding `payload`. */
function message(field: number, payload: Uint8Array): Uint8Array {
  const head = [...varint(field * 8 + 2), ...varint(payload.length)];
  const out = new Uint8Array(head.length + payload.length);
  out.set(head);
  out.set(payload, head.length);
  return out;
}

/** 4,000,000 empty `Span` messages in one scope of one resource: 8 MB, 7.8 KB gzipped. */
function protobufSpans(): Uint8Array<ArrayBuffer> {
  const spans = new Uint8Array(4_000_000 * 2);
  for (let i = 0; i < spans.length; i += 2) spans[i] = 0x12; // field 2, empty
  const request = message(1, message(2, spans));
  return new Uint8Array(request);
}

const encoder = new TextEncoder();

/** Returns the body (gzipped) and its content type. */
export async function dosBody(
  kind: DosBody,
): Promise<{ body: Uint8Array; type: string }> {
  switch (kind) {
    case "otlp-protobuf":
      return {
        body: await gzip(protobufSpans()),
        type: "application/x-protobuf",
      };
    case "otlp-json":
      return {
        body: await gzip(encoder.encode(
          `{"resourceSpans":[{"scopeSpans":[{"spans":[${
            Array(4_000_000).fill("{}").join(",")
          }]}]}]}`,
        )),
        type: "application/json",
      };
    case "ndjson":
      return {
        body: await gzip(encoder.encode("x\n".repeat(16_000_000))),
        type: "application/x-ndjson",
      };
    case "json-array":
      return {
        body: await gzip(
          encoder.encode(`[${Array(8_000_000).fill("{}").join(",")}]`),
        ),
        type: "application/json",
      };
  }
}

function peakRss(): number | null {
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

async function main(kind: string): Promise<void> {
  if (!(DOS_BODIES as readonly string[]).includes(kind)) {
    throw new Error(`unknown body ${kind}; use ${DOS_BODIES.join(", ")}`);
  }
  const dir = await Deno.makeTempDir({ prefix: "trace-dos-" });
  const db = await openDb({ dataDir: dir });
  try {
    await initializeObs(db);
    const app = createApp({ db, log: () => {} });
    const { body, type } = await dosBody(kind as DosBody);
    const path = kind.startsWith("otlp") ? "/v1/traces" : "/api/events";
    const before = Deno.memoryUsage().rss;
    const started = performance.now();
    const response = await app.request(path, {
      method: "POST",
      body: new Uint8Array(body),
      headers: { "content-type": type, "content-encoding": "gzip" },
    });
    const text = await response.text();
    const seconds = (performance.now() - started) / 1000;
    const after = Math.max(Deno.memoryUsage().rss, peakRss() ?? 0);
    const code = /"code":"([a-z_]+)"/.exec(text)?.[1] ?? null;
    // deno-lint-ignore no-console
    console.log(JSON.stringify({
      body: kind,
      gzipped_bytes: body.length,
      status: response.status,
      code,
      seconds,
      rss_growth_mb: (after - before) / 2 ** 20,
    }));
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main(Deno.args[0] ?? "");
