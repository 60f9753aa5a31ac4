/**
 * The run actions: `POST /targets/:id/run` runs the deletion contract on a
 * registered target and `POST /regressions/:id/replay` replays a saved
 * regression, both in the background through the process's job manager
 * (one external run at a time, shared with MCP). Each answers with a
 * redirect to the new run's page, which shows its live progress and then
 * its result; a JSON client gets `{run_id, …}` with 202. A second start
 * while a run is running is refused with 409 naming the running run.
 *
 * Who may: `routes/access.ts` lists both routes under `runs.write`
 * (operators and administrators, unscoped, not in read-only mode) and
 * checks the session's CSRF token before they run; `createApp` has already
 * refused cross-site requests by `Origin` and `Sec-Fetch-Site`.
 *
 * @module
 */

import type { Context, Hono } from "hono";
import type { FC } from "hono/jsx";
import { HTTPException } from "hono/http-exception";
import { TokenEnvUnsetError } from "../../lib/errors.ts";
import { validateTargetId } from "../../lib/ledger/targets.ts";
import {
  AdapterUnreachableError,
  type JobRequest,
  RunBusyError,
  type RunJobs,
} from "../../lib/runs/mod.ts";
import type { UiAuth } from "../_ui_auth.ts";
import type { SiteInfo, UiEnv } from "../ui/context.ts";
import { Command } from "../ui/components/command.tsx";
import { renderPage } from "../ui/layout.tsx";
import { runHref, targetHref } from "../ui/links.ts";
import { withDataFlags } from "../ui/printed_command.ts";
import type { RunSource } from "../ui/run_view.ts";

/** What the action routes need. */
export interface ActionDeps {
  auth: UiAuth;
  site: SiteInfo;
}

/** Registers the run and replay actions on `app`. */
export function registerRunActions(
  app: Hono<UiEnv>,
  deps: ActionDeps,
  source: RunSource,
): void {
  app.post("/targets/:id/run", (c) =>
    start(c, deps, source, {
      targetId: validateTargetId(c.req.param("id")),
    }));
  app.post(
    "/regressions/:id/replay",
    (c) => start(c, deps, source, { regressionId: c.req.param("id") }),
  );
}

async function start(
  c: Context<UiEnv>,
  deps: ActionDeps,
  source: RunSource,
  request: JobRequest,
): Promise<Response> {
  const jobs = requireJobs(source.jobs);
  try {
    const started = await jobs.start(request);
    if (wantsJson(c)) return c.json(started, 202);
    return c.redirect(runHref(started.run_id), 303);
  } catch (error) {
    if (error instanceof RunBusyError) {
      return refusedBusy(c, deps, error.runningRunId, error.message);
    }
    if (error instanceof AdapterUnreachableError) {
      return unreachable(c, deps, request, error.message);
    }
    if (error instanceof TokenEnvUnsetError && !wantsJson(c)) {
      return tokenUnset(c, deps, request, error);
    }
    throw error;
  }
}

function requireJobs(jobs: RunJobs | null): RunJobs {
  if (jobs) return jobs;
  throw new HTTPException(503, {
    message:
      "This server was started without a job manager, so it cannot start runs; use trace serve, or run trace external-run",
  });
}

function wantsJson(c: Context<UiEnv>): boolean {
  const accept = c.req.header("accept") ?? "";
  return accept.includes("application/json") && !accept.includes("text/html");
}

/** 409: another run is running; the answer names it and links to it. */
function refusedBusy(
  c: Context<UiEnv>,
  deps: ActionDeps,
  runningRunId: string,
  message: string,
): Response | Promise<Response> {
  if (wantsJson(c)) {
    return c.json({
      error: { code: "conflict", message, running_run_id: runningRunId },
    }, 409);
  }
  return renderPage(
    c,
    {
      title: "A run is already running",
      path: c.req.path,
      principal: c.get("principal"),
      csrf: c.get("csrf"),
      site: deps.site,
    },
    <div class="narrow">
      <h1>A run is already running</h1>
      <p class="notice" role="alert">
        Nothing was started: this server runs one deletion contract run at a
        time, and run <code>{runningRunId}</code> is still running.
      </p>
      <p>
        <a href={runHref(runningRunId)}>Watch run {runningRunId}</a>, then start
        this one again when it has finished.
      </p>
    </div>,
    409,
  );
}

/**
 * 502: the target's adapter did not answer, so nothing ran. The operator who
 * pressed the button sees why (the server's generic 500 would hide it).
 */
function unreachable(
  c: Context<UiEnv>,
  deps: ActionDeps,
  request: JobRequest,
  message: string,
): Response | Promise<Response> {
  if (wantsJson(c)) {
    return c.json({ error: { code: "transport", message } }, 502);
  }
  return renderPage(
    c,
    {
      title: "The staging adapter did not answer",
      path: c.req.path,
      principal: c.get("principal"),
      csrf: c.get("csrf"),
      site: deps.site,
    },
    <div class="narrow">
      <h1>The staging adapter did not answer</h1>
      {/* The message says what to do and that nothing was run or recorded. */}
      <p class="notice" role="alert">{message}</p>
      <BackLink request={request} />
    </div>,
    502,
  );
}

/**
 * 400 (as the JSON answer): the target names its bearer token by a variable
 * this server's environment lacks. The fix is outside the browser (restart
 * the server with the variable set), so the page says how, with the command,
 * where the generic error page would show the sentence alone.
 */
function tokenUnset(
  c: Context<UiEnv>,
  deps: ActionDeps,
  request: JobRequest,
  error: TokenEnvUnsetError,
): Response | Promise<Response> {
  // token_env is a checked variable name, so it is a shell word as it is;
  // `read -rs` keeps the token off the screen and out of shell history.
  const variable = error.variable;
  const restart = `read -rs ${variable} && export ${variable}\n${
    withDataFlags("trace serve", deps.site.dataFlags)
  }`;
  return renderPage(
    c,
    {
      title: "This server cannot read the target's token",
      path: c.req.path,
      principal: c.get("principal"),
      csrf: c.get("csrf"),
      site: deps.site,
    },
    <div class="narrow">
      <h1>This server cannot read the target's token</h1>
      <p class="notice" role="alert">{error.message}</p>
      <p>
        Nothing was sent to the staging adapter and nothing was recorded. The
        target names its bearer token by an environment variable (its{" "}
        <code>token_env</code>), and trace serve read its environment once, when
        it started: setting the variable in a shell now does not reach this
        server.
      </p>
      <p>
        Stop this server (Ctrl-C where it runs) and start it again with the
        variable set, adding the other flags you started it with. The first line
        waits for the token: paste it and press Enter (it is not shown and not
        kept in your shell's history).
      </p>
      <Command text={restart} />
      <BackLink request={request} />
    </div>,
    400,
  );
}

/**
 * Where a refused start leads back to: the page whose button was pressed,
 * to press it again once the cause is fixed.
 */
const BackLink: FC<{ request: JobRequest }> = ({ request }) => {
  const back = "targetId" in request
    ? { href: targetHref(request.targetId), label: "the target" }
    : { href: "/regressions", label: "the regressions" };
  return (
    <p>
      <a href={back.href}>Back to {back.label}</a>
    </p>
  );
};
