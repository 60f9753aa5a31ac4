/**
 * Shared by the producer tests: an OpenTelemetry SDK pipeline (unmodified:
 * `TracerProvider`, `SimpleSpanProcessor`, the OTLP/HTTP exporter) that
 * sends what a real library produced to `createApp` on an ephemeral loopback
 * port, and readers of what the index kept.
 */

import assert from "node:assert/strict";
import { context, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { Hono } from "hono";
import type { TraceDb } from "../lib/db.ts";
import { initializeObs, type TraceEvent } from "../lib/obs/mod.ts";
import { queryTraceEvents } from "../lib/obs/query/mod.ts";
import { type AppOptions, createApp } from "../routes/app.ts";
import { withDb, withServer } from "./_helpers.ts";

// Libraries that start spans inside async callbacks (the AI SDK, OpenInference)
// need an async context manager for parent links, as any Node or Deno app does.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** A tracer whose spans go to `exporter` (and are kept in memory too). */
export interface Producer {
  tracer: Tracer;
  /** Every finished span, as the SDK handed it to the exporter. */
  spans(): ReadableSpan[];
  /** Flushes and shuts the pipeline down. */
  close(): Promise<void>;
}

/** Builds an SDK pipeline with `resource` that exports to `url` (when given) and to memory. */
export function producer(
  resource: Record<string, string>,
  url?: string,
): Producer {
  const memory = new InMemorySpanExporter();
  const spanProcessors = [new SimpleSpanProcessor({ exporter: memory })];
  if (url !== undefined) {
    spanProcessors.push(
      new SimpleSpanProcessor({
        exporter: new OTLPTraceExporter({ url: `${url}/v1/traces` }),
      }),
    );
  }
  const provider = new TracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors,
  });
  // The in-memory exporter forgets its spans on shutdown: keep them.
  let kept: ReadableSpan[] | null = null;
  return {
    tracer: provider.getTracer("trace-producer-tests", "1.0.0"),
    spans: () => kept ?? memory.getFinishedSpans(),
    close: async () => {
      await provider.forceFlush();
      kept = [...memory.getFinishedSpans()];
      await provider.shutdown();
    },
  };
}

/** Serves `createApp` on an ephemeral loopback port over a fresh index. */
export async function withTraceServer<T>(
  fn: (url: string, db: TraceDb, dataDir: string) => Promise<T>,
  options: Omit<AppOptions, "db"> = {},
): Promise<T> {
  return await withDb(async (db, dataDir) => {
    await initializeObs(db);
    const app = createApp({ db, log: () => {}, ...options });
    return await withServer(app.fetch, (server) => fn(server.url, db, dataDir));
  });
}

/** Every stored event through the read path the CLI and the UI use, oldest first. */
export async function storedEvents(db: TraceDb): Promise<TraceEvent[]> {
  const page = await queryTraceEvents(db, { limit: 500 });
  assert.equal(page.has_more, false);
  return [...page.events].reverse();
}

/** The stored event of `spanName` (exactly one). */
export function eventOf(
  events: readonly TraceEvent[],
  spanName: string,
): TraceEvent {
  const found = events.filter((e) =>
    e.attributes["otel.span_name"] === spanName
  );
  assert.equal(
    found.length,
    1,
    `expected one ${spanName} event among ${
      events.map((e) => e.attributes["otel.span_name"]).join(", ")
    }`,
  );
  return found[0]!;
}

/** Every stored preview, joined. */
export async function previewText(db: TraceDb): Promise<string> {
  const rows = await db.client.execute("SELECT content FROM obs_previews");
  return rows.rows.map((row) => String(row.content)).join("\n");
}

/** Asserts that no table but the previews holds any of `secrets`. */
export async function assertOnlyPreviewsHold(
  db: TraceDb,
  secrets: readonly string[],
): Promise<void> {
  const tables = await db.client.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'obs_previews'",
  );
  assert.ok(tables.rows.length > 3, "the index has its tables");
  for (const { name } of tables.rows) {
    const dump = JSON.stringify(
      (await db.client.execute(`SELECT * FROM "${String(name)}"`)).rows,
    );
    for (const secret of secrets) {
      assert.ok(!dump.includes(secret), `${secret} leaked into ${name}`);
    }
  }
}

/** Posts `spans` as the SDK's own JSON serializer encodes them. */
export async function postSpans(
  app: Hono,
  spans: ReadableSpan[],
  headers: Record<string, string> = {},
): Promise<Response> {
  return await app.request("/v1/traces", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: Uint8Array.from(JsonTraceSerializer.serializeRequest(spans)!),
  });
}
