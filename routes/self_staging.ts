/**
 * The staging adapter over Trace's own index, served under `/staging`
 * (`trace serve --staging-adapter`): `POST /staging/ingest`, `/query`,
 * `/inventory` and `/delete`, answered by `lib/obs/self_contract/`. Point a
 * staging config's `base_url` at `http://127.0.0.1:PORT/staging` and
 * `trace external run` proves Trace's own erasure. `createApp` mounts it
 * only on a loopback bind, behind its Host, Origin and Content-Type guards,
 * and answers every error this sub-app throws (400 for a body the contract
 * refuses).
 *
 * @module
 */

import { Hono } from "hono";
import { OPERATIONS } from "../lib/contract/protocol.ts";
import type { SelfStagingAdapter } from "../lib/obs/self_contract/mod.ts";
import { readAdapterJson } from "./_body.ts";
import { methodNotAllowed } from "./_errors.ts";

/** Where the adapter is mounted. */
export const SELF_STAGING_PATH = "/staging";

/** The `/staging` sub-app over `adapter`. */
export function createSelfStagingApi(adapter: SelfStagingAdapter): Hono {
  const app = new Hono();
  for (const op of OPERATIONS) {
    const path = `${SELF_STAGING_PATH}/${op}`;
    app.post(path, async (c) => {
      const exchange = await adapter.handle(
        op,
        await readAdapterJson(c.req.raw),
      );
      return c.json(exchange.response);
    });
    app.all(path, (c) => methodNotAllowed(c, ["POST"]));
  }
  return app;
}
