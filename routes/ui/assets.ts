/**
 * The UI's two static assets, the browser script and the stylesheet, served
 * from the bundle module at URLs that carry their content hash, so browsers
 * may cache them for a year: a new build changes the URL.
 *
 * @module
 */

import { Hono } from "hono";
import {
  CLIENT_SCRIPT,
  CLIENT_SCRIPT_HASH,
  STYLESHEET,
  STYLESHEET_HASH,
} from "./_client_bundle.ts";

/** URL of the browser script. */
export const SCRIPT_PATH = `/ui/app.${CLIENT_SCRIPT_HASH}.js`;
/** URL of the stylesheet. */
export const STYLE_PATH = `/ui/style.${STYLESHEET_HASH}.css`;

const IMMUTABLE = "public, max-age=31536000, immutable";

/** Routes serving the hashed assets (no sign-in needed: they hold no data). */
export function createAssetRoutes(): Hono {
  const app = new Hono();
  const serve = (body: string, type: string) => () =>
    new Response(body, {
      headers: {
        "content-type": type,
        "cache-control": IMMUTABLE,
        "x-content-type-options": "nosniff",
      },
    });
  app.get(SCRIPT_PATH, serve(CLIENT_SCRIPT, "text/javascript; charset=utf-8"));
  app.get(STYLE_PATH, serve(STYLESHEET, "text/css; charset=utf-8"));
  return app;
}
