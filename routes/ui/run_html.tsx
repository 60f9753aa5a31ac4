/**
 * A run's detail as ONE self-contained HTML file, for CI artifacts and
 * mail: the same body as the page (verdict and why, findings, timeline,
 * cleanup, requests, raw report), with the stylesheet inlined, SVG inline,
 * no script and nothing fetched from a network. Without script, a
 * finding's samples link is an anchor to the first of them, and the
 * targeted sample row is highlighted by CSS (`:target`).
 *
 * @module
 */

import { raw } from "hono/html";
import { STYLESHEET } from "./_client_bundle.ts";
import { formatUtc } from "./format.ts";
import type { RunReport } from "../../lib/runner/report.ts";
import {
  loadRunDetail,
  reportDetail,
  type RunDetail,
  type RunSource,
} from "./run_view.ts";
import { RunBody, runStatusWord } from "./run_body.tsx";

/** Options for {@link renderRunDocument}. */
export interface RunDocumentOptions {
  /** When the file is written (ISO 8601; default now). */
  generatedAt?: string;
  /** The Trace version that wrote it. */
  version?: string;
  /**
   * The data flags its commands carry (` --data-dir DIR`, as the command
   * that wrote it was given them), so that a command copied from a CI
   * artifact acts on the run's own data, as the Markdown summary's do;
   * default none.
   */
  dataFlags?: string;
}

/** Only the document's own rules beyond the UI stylesheet. */
const DOCUMENT_STYLE =
  "body{max-width:1280px;margin:0 auto}.site-main{padding-top:24px}.copy-button{display:none}";

/** The whole run detail as one HTML document (a string, `<!DOCTYPE html>` first). */
export async function renderRunDocument(
  detail: RunDetail,
  options: RunDocumentOptions = {},
): Promise<string> {
  const generated = options.generatedAt ?? new Date().toISOString();
  const title = `${
    runStatusWord(detail).toUpperCase()
  } · ${detail.run_id} · Trace`;
  // The CSS comes from our own bundle; `</style` cannot occur in it.
  const css = `${STYLESHEET}\n${DOCUMENT_STYLE}`.replaceAll(
    "</style",
    "<\\/style",
  );
  const page = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <meta
          name="generator"
          content={`Trace ${options.version ?? ""}`.trim()}
        />
        <title>{title}</title>
        <style>{raw(css)}</style>
      </head>
      <body>
        <main id="main" class="site-main standalone">
          <RunBody
            detail={detail}
            view={{
              mode: "document",
              now: Date.parse(generated),
              dataFlags: options.dataFlags ?? "",
            }}
          />
        </main>
        <footer class="site-footer">
          <div class="site-footer__inner">
            <span>
              {`Written by Trace${
                options.version ? ` ${options.version}` : ""
              } at ${
                formatUtc(generated)
              }. One self-contained file: no script, nothing fetched.`}
            </span>
          </div>
        </footer>
      </body>
    </html>
  );
  return `<!DOCTYPE html>\n${await page.toString()}\n`;
}

/** A report just made, as one HTML document (`--html FILE` on a run or replay). */
export async function reportDocument(
  source: RunSource,
  report: RunReport,
  regressionId: string | null,
  options: RunDocumentOptions = {},
): Promise<string> {
  return await renderRunDocument(
    await reportDetail(source, report, regressionId),
    options,
  );
}

/** Loads a run and renders it as one HTML document (`--html FILE`). */
export async function runDocument(
  source: RunSource,
  runId: string,
  options: RunDocumentOptions = {},
): Promise<string> {
  return await renderRunDocument(await loadRunDetail(source, runId), options);
}
