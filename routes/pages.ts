/**
 * The trace UI, mounted by `createApp`: the hashed assets, sign-in, and the
 * pages. Each page is one file under `routes/pages/` exporting a
 * `PageSpec` (its path, data function and rendering); `definePage` gives it
 * a JSON twin, the sign-in check and the secure headers. The kit the pages
 * are built from (shell, components, twin helper) lives in `routes/ui/`.
 *
 * The run pages (overview, runs, run detail, targets, regressions,
 * compare, reference suite, and the run and replay actions) read runs
 * through one `RunSource`: the database, the data directory of checkpoints
 * and the process's job manager.
 *
 * @module
 */

import { Hono } from "hono";
import type { TraceDb } from "../lib/db.ts";
import type { HealthMonitor } from "../lib/obs/maint/mod.ts";
import { createLoginRoutes } from "./_login.tsx";
import type { UiAuth } from "./_ui_auth.ts";
import { comparePage as traceComparePage } from "./pages/traces_compare.tsx";
import { finderTimesInUtc, findPage } from "./pages/traces_find.tsx";
import { healthPage } from "./pages/traces_health.tsx";
import { comparePage } from "./pages/compare.tsx";
import { overviewPage } from "./pages/overview.tsx";
import { referencePage } from "./pages/reference.tsx";
import { assessmentPage } from "./pages/assessment.tsx";
import { regressionsPage } from "./pages/regressions.tsx";
import { registerRunActions } from "./pages/run_actions.tsx";
import { registerRunDownloads, runDetailPage } from "./pages/run_detail.tsx";
import { runsPage } from "./pages/runs.tsx";
import { targetPage, targetsPage } from "./pages/targets.tsx";
import { inspectPage } from "./pages/traces_inspect.tsx";
import { createTraceJson } from "./pages/traces_json.ts";
import { createAssetRoutes } from "./ui/assets.ts";
import type { SiteInfo, UiEnv } from "./ui/context.ts";
import { definePage } from "./ui/page.ts";
import { defineCanonicalQueryPage } from "./ui/form_refusal.tsx";
import type { RunJobs } from "../lib/runs/mod.ts";
import type { RunSource } from "./ui/run_view.ts";
import { LastHealth } from "./ui/last_health.ts";

/** Where run pages find checkpoints, and the job manager that starts runs. */
export interface RunPagesOptions {
  /** The data directory of the runs' checkpoints. */
  dataDir: string;
  /** The process's job manager, shared with every other entry point that starts runs. */
  jobs: RunJobs;
}

/** What the pages need from the app. */
export interface PagesOptions {
  db: TraceDb;
  auth: UiAuth;
  site: SiteInfo;
  /** Absent: run pages read the ledger only and offer no run actions. */
  runs?: RunPagesOptions | undefined;
  /** The server's health monitor, shared with `GET /api/health`. */
  health: HealthMonitor;
}

/** The UI's routes, to mount at `/`. */
export function createPages(options: PagesOptions): Hono<UiEnv> {
  const deps = { auth: options.auth, site: options.site };
  const app = new Hono<UiEnv>();
  app.route("/", createAssetRoutes());
  app.route("/", createLoginRoutes(deps));
  // Browsers ask for one when showing a JSON twin or an API answer.
  app.get("/favicon.ico", (c) => c.body(null, 204));
  const health = new LastHealth();
  definePage(app, deps, health.watch(healthPage(options.health)));
  defineCanonicalQueryPage(app, deps, findPage(options.db), finderTimesInUtc);
  definePage(app, deps, inspectPage(options.db));
  definePage(app, deps, traceComparePage(options.db));
  app.route(
    "/",
    createTraceJson({ db: options.db, auth: options.auth }),
  );
  const source: RunSource = {
    db: options.db,
    dataDir: options.runs?.dataDir ?? null,
    jobs: options.runs?.jobs ?? null,
  };
  definePage(app, deps, overviewPage(source, health));
  definePage(app, deps, runsPage(source));
  registerRunDownloads(app, deps, source);
  definePage(app, deps, runDetailPage(source));
  definePage(app, deps, targetsPage(source));
  definePage(app, deps, targetPage(source));
  definePage(app, deps, regressionsPage(source));
  definePage(app, deps, comparePage(source));
  definePage(app, deps, referencePage(source));
  definePage(app, deps, assessmentPage());
  registerRunActions(app, deps, source);
  return app;
}
