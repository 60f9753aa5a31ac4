/**
 * The staging adapter API over a {@link MemoryService}: four POST operations
 * with valibot-checked bodies, one-line JSON errors, and request log lines
 * that carry counts and namespaces but never document or query text.
 *
 * @module
 */

import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import * as v from "valibot";
import { describeIssues, objectIssueMessage } from "../lib/issues.ts";
import { OPERATIONS } from "../lib/contract/protocol.ts";
import type { MemoryService } from "../lib/demo/memory_service.ts";

/** Options for {@link createStagingApp}. */
export interface StagingAppOptions {
  /** Receives one line per request (no trailing newline). */
  log?: (line: string) => void;
}

/** Largest accepted request body, matching the protocol's response limit. */
const MAX_BODY_BYTES = 1024 * 1024;

const Name = (what: string) =>
  v.pipe(
    v.string("must be a string"),
    v.minLength(1, "must not be empty"),
    v.maxLength(256, `must be at most 256 characters (${what})`),
  );

function strict<const T extends v.ObjectEntries>(entries: T) {
  return v.strictObject(
    entries,
    objectIssueMessage(`allowed keys: ${Object.keys(entries).join(", ")}`),
  );
}

const SCHEMAS = {
  ingest: strict({
    namespace: Name("namespace"),
    id: Name("id"),
    text: v.pipe(
      v.string("must be a string"),
      v.maxLength(100_000, "must be at most 100000 characters"),
    ),
  }),
  query: strict({
    namespace: Name("namespace"),
    query: v.pipe(
      v.string("must be a string"),
      v.maxLength(10_000, "must be at most 10000 characters"),
    ),
  }),
  inventory: strict({ namespace: Name("namespace") }),
  delete: strict({
    namespace: Name("namespace"),
    ids: v.pipe(
      v.array(Name("id"), "must be an array of ids"),
      v.maxLength(1000, "must hold at most 1000 ids"),
    ),
  }),
} as const;

type Env = { Variables: { namespace?: string; idCount?: number } };

/** Builds the staging adapter app (no listening; mount or serve it). */
export function createStagingApp(
  service: MemoryService,
  options: StagingAppOptions = {},
): Hono<Env> {
  const app = new Hono<Env>();
  const log = options.log;
  if (log) app.use(requestLog(log));
  app.use(bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) =>
      c.json({ error: `body: must be at most ${MAX_BODY_BYTES} bytes` }, 413),
  }));

  app.post("/ingest", async (c) => {
    const body = await readBody(c.req.raw, SCHEMAS.ingest);
    c.set("namespace", body.namespace);
    c.set("idCount", 1);
    return c.json(await service.ingest(body.namespace, body.id, body.text));
  });
  app.post("/query", async (c) => {
    const body = await readBody(c.req.raw, SCHEMAS.query);
    c.set("namespace", body.namespace);
    return c.json({ text: service.query(body.namespace, body.query).text });
  });
  app.post("/inventory", async (c) => {
    const body = await readBody(c.req.raw, SCHEMAS.inventory);
    c.set("namespace", body.namespace);
    return c.json(service.inventory(body.namespace));
  });
  app.post("/delete", async (c) => {
    const body = await readBody(c.req.raw, SCHEMAS.delete);
    c.set("namespace", body.namespace);
    c.set("idCount", body.ids.length);
    await service.delete(body.namespace, body.ids);
    return c.json({ acknowledged: true });
  });
  for (const op of OPERATIONS) {
    app.all(
      `/${op}`,
      (c) =>
        c.json({ error: `method ${c.req.method} not allowed; use POST` }, 405, {
          Allow: "POST",
        }),
    );
  }

  app.notFound((c) =>
    c.json({
      error: `no such operation; use POST ${
        OPERATIONS.map((op) => `/${op}`).join(", ")
      }`,
    }, 404)
  );
  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      return c.json({ error: error.message }, error.status);
    }
    // Never echo internal messages: they could quote stored text.
    return c.json({ error: "internal error" }, 500);
  });
  return app;
}

async function readBody<S extends v.GenericSchema>(
  request: Request,
  schema: S,
): Promise<v.InferOutput<S>> {
  let json: unknown;
  try {
    json = JSON.parse(await request.text());
  } catch {
    json = undefined;
  }
  // valibot's object schemas accept arrays, which are never a valid operation body.
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new HTTPException(400, { message: "body: must be a JSON object" });
  }
  const result = v.safeParse(schema, json);
  if (!result.success) {
    throw new HTTPException(400, { message: describeIssues(result.issues) });
  }
  return result.output;
}

function requestLog(log: (line: string) => void): MiddlewareHandler<Env> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const ms = (performance.now() - started).toFixed(1);
    const parts = [
      c.req.method,
      safeToken(new URL(c.req.url).pathname),
      String(c.res.status),
      `${ms}ms`,
    ];
    const namespace = c.get("namespace");
    if (namespace !== undefined) {
      parts.push(`namespace=${safeToken(namespace)}`);
    }
    const idCount = c.get("idCount");
    if (idCount !== undefined) parts.push(`ids=${idCount}`);
    log(parts.join(" "));
  };
}

/** Plain identifiers as-is; anything else JSON-quoted and cut short, so a log line stays one line. */
function safeToken(value: string): string {
  if (/^[A-Za-z0-9_.:/-]{1,128}$/.test(value)) return value;
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}
