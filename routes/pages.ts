/**
 * The trace UI, mounted by `createApp`: the hashed assets, sign-in, and the
 * pages. Each page is one file under `routes/pages/` exporting a
 * `PageSpec` (its path, data function and rendering); `definePage` gives it
 * a JSON twin, the sign-in check and the secure headers. The kit the pages
 * are built from (shell, components, twin helper) lives in `routes/ui/`.
 *
 * Until the overview page exists, `/` goes to the index health page.
 *
 * @module
 */

import { Hono } from "hono";
import type { TraceDb } from "../lib/db.ts";
import { createLoginRoutes } from "./_login.tsx";
import type { UiAuth } from "./_ui_auth.ts";
import { comparePage } from "./pages/traces_compare.tsx";
import { findPage } from "./pages/traces_find.tsx";
import { healthPage } from "./pages/traces_health.tsx";
import { inspectPage } from "./pages/traces_inspect.tsx";
import { createTraceJson } from "./pages/traces_json.ts";
import { createAssetRoutes } from "./ui/assets.ts";
import type { SiteInfo, UiEnv } from "./ui/context.ts";
import { HOME_PATH } from "./ui/nav.ts";
import { definePage } from "./ui/page.ts";

/** What the pages need from the app. */
export interface PagesOptions {
  db: TraceDb;
  auth: UiAuth;
  site: SiteInfo;
}

/** The UI's routes, to mount at `/`. */
export function createPages(options: PagesOptions): Hono<UiEnv> {
  const deps = { auth: options.auth, site: options.site };
  const app = new Hono<UiEnv>();
  app.route("/", createAssetRoutes());
  app.route("/", createLoginRoutes(deps));
  app.get("/", (c) => c.redirect(HOME_PATH, 302));
  // Browsers ask for one when showing a JSON twin or an API answer.
  app.get("/favicon.ico", (c) => c.body(null, 204));
  definePage(app, deps, healthPage(options.db));
  definePage(app, deps, findPage(options.db));
  definePage(app, deps, inspectPage(options.db));
  definePage(app, deps, comparePage(options.db));
  app.route(
    "/",
    createTraceJson({ db: options.db, auth: options.auth }),
  );
  return app;
}
