/**
 * `/runs/:id` and `/runs/:id.json`: one run, completed, running or
 * interrupted (`routes/ui/run_view.ts` loads it, `run_body.tsx` renders
 * it), and its downloads: the JSON report, JUnit XML, the Markdown summary
 * and the page as one self-contained HTML file.
 *
 * @module
 */

import type { Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { renderJunit } from "../../lib/render/junit.ts";
import { renderSummaryMarkdown } from "../../lib/render/summary_md.ts";
import { requirePrincipal, type UiAuth } from "../_ui_auth.ts";
import { runActionOf } from "./_run_action.ts";
import {
  ActionForm,
  type RunAction,
  showsRunControls,
} from "../ui/components/action_form.tsx";
import type { SiteInfo, UiEnv } from "../ui/context.ts";
import { regressionReplayAction, targetRunAction } from "../ui/links.ts";
import type { PageSpec, PageView } from "../ui/page.ts";
import { RunBody, runStatusWord } from "../ui/run_body.tsx";
import {
  loadRunDetail,
  type RunDetail,
  type RunSource,
} from "../ui/run_view.ts";
import { renderRunDocument } from "../ui/run_html.tsx";

/** The data of the run page: the run, and whether this request may run it again. */
export type RunPageData = RunDetail & { run_action: RunAction };

/** The run detail page over `source`. */
export function runDetailPage(source: RunSource): PageSpec<RunPageData> {
  return {
    path: "/runs/:id",
    title: (data) =>
      `${runStatusWord(data).toUpperCase()} · ${data.target.id} · run`,
    load: async (c, params) => ({
      ...await loadRunDetail(source, params.id!),
      run_action: runActionOf(c, source.jobs !== null),
    }),
    render: (data, view) => (
      <RunBody
        detail={data}
        view={{
          mode: "page",
          now: view.now,
          jsonHref: view.jsonHref,
          dataFlags: view.dataFlags,
          // Called, not rendered as an element: an element is there even
          // when it draws nothing, and the page would keep an empty row.
          actions: RunActions({ detail: data, view }),
        }}
      />
    ),
  };
}

/** "Run again" / "Replay again" for roles that may run, when this server can. */
function RunActions(
  { detail, view }: { detail: RunPageData; view: PageView },
) {
  if (!showsRunControls(detail.run_action)) return null;
  if (detail.kind !== "external" || detail.state === "running") return null;
  if (detail.regression_id) {
    return (
      <ActionForm
        action={regressionReplayAction(detail.regression_id)}
        csrf={view.csrf ?? null}
        run={detail.run_action}
        label="Replay again"
        title={`Replay regression ${detail.regression_id} with fresh synthetic data`}
      />
    );
  }
  if (
    detail.target.source !== "registered" && detail.target.source !== "config"
  ) {
    return null;
  }
  return (
    <ActionForm
      action={targetRunAction(detail.target.id)}
      csrf={view.csrf ?? null}
      run={detail.run_action}
      label="Run again"
      title={`Run the deletion contract on ${detail.target.id} again`}
    />
  );
}

/** What the download routes need. */
export interface DownloadDeps {
  auth: UiAuth;
  site: SiteInfo;
}

/** Registers `/runs/:id/report.json`, `junit.xml`, `summary.md` and `report.html`. */
export function registerRunDownloads(
  app: Hono<UiEnv>,
  deps: DownloadDeps,
  source: RunSource,
): void {
  const signedIn = requirePrincipal(deps.auth, "page");
  const file = (
    name: string,
    type: string,
    render: (detail: RunDetail) => string | Promise<string>,
  ) => {
    app.get(`/runs/:id/${name}`, signedIn, async (c) => {
      const detail = await loadRunDetail(source, c.req.param("id"));
      if (!detail.report) {
        throw new HTTPException(409, {
          message:
            `Run ${detail.run_id} has no finished report yet (it is ${detail.state}); download it once it has one`,
        });
      }
      return attachment(
        c,
        `${detail.run_id}.${name.split(".").pop()}`,
        type,
        await render(detail),
      );
    });
  };
  file(
    "report.json",
    "application/json; charset=utf-8",
    (d) => JSON.stringify(d.report, null, 2) + "\n",
  );
  file(
    "junit.xml",
    "application/xml; charset=utf-8",
    (d) => renderJunit(d.report!),
  );
  file(
    "summary.md",
    "text/markdown; charset=utf-8",
    (d) =>
      renderSummaryMarkdown(d.report!, {
        replayCommand: d.next_steps.find((s) =>
          s.command?.includes("replay")
        )?.command ?? null,
        regressionId: d.regression_id,
        laterCleanup: d.later_cleanup,
      }),
  );
  file(
    "report.html",
    "text/html; charset=utf-8",
    (d) => renderRunDocument(d, { version: deps.site.version }),
  );
}

function attachment(
  c: Context<UiEnv>,
  filename: string,
  type: string,
  body: string,
): Response {
  return c.body(body, 200, {
    "content-type": type,
    "content-disposition": `attachment; filename="${filename}"`,
    "cache-control": "no-store",
  });
}
