/**
 * Operator endpoints, mounted by `createApp` behind the access middleware
 * (`access.ts`, which has already checked role, tenant binding, read-only
 * mode and the CSRF token):
 *
 * | endpoint                          | action            | what                                                  |
 * | --------------------------------- | ----------------- | ----------------------------------------------------- |
 * | `POST /traces/reveal`             | `content.reveal`  | one event's preview, once, with a reason (audited)    |
 * | `POST /traces/account/resolve`    | `account.resolve` | `{email}` → user id through the identity resolver     |
 * | `GET /traces/artifact.json`       | `artifact.lookup` | a ref's current state through the artifact resolver   |
 * | `GET /traces/replay-plan.json`    | `replay.plan`     | the inert plan of a selection, nothing stored         |
 * | `POST /traces/replays`            | `replay.draft`    | the same plan stored as an inert draft                |
 * | `GET /traces/replays.json`        | `replay.read`     | stored drafts in the principal's scope                |
 * | `GET /traces/events/:id` (+ twin) | `trace.read`      | one event id's events, hosting the operator controls  |
 *
 * Every privileged answer is written to the audit trail first (`_operator_io.ts`).
 * Bodies are read, within their bound, by the access middleware.
 *
 * @module
 */

import { Hono } from "hono";
import {
  AuditIntegrityError,
  AuditUnavailableError,
  authorizePlan,
  createDraft,
  findRevealTarget,
  freezePlan,
  type HookName,
  type HostHooks,
  listDrafts,
  missingHookMessage,
  parseAccountRequest,
  parseArtifactQuery,
  parseReplaySelection,
  parseRevealRequest,
  readReplaySelection,
  type ReplayPlan,
  type ReplaySelection,
  resolveArtifact,
  resolveIdentity,
  tenantOf,
} from "../lib/auth/mod.ts";
import type { TraceDb } from "../lib/db.ts";
import { NotFoundError } from "../lib/errors.ts";
import { queryTraceEvents, readPreviewContent } from "../lib/obs/query/mod.ts";
import { isFormBody } from "./_body.ts";
import { methodNotAllowed, type ServerLog } from "./_errors.ts";
import { HttpRefusal } from "./_audit_refusals.ts";
import {
  type AuditDeps,
  audited,
  auditFailure,
  auditUnavailable,
  readFields,
  singleParams,
} from "./_operator_io.ts";
import {
  DraftBody,
  operatorPage,
  ResolvedBody,
  RevealedBody,
} from "./_operator_pages.tsx";
import type { UiAuth } from "./_ui_auth.ts";
import { scopeFilter } from "./access.ts";
import { eventPage } from "./pages/traces_event.tsx";
import type { SiteInfo, UiEnv } from "./ui/context.ts";
import { definePage } from "./ui/page.ts";

/** What the operator endpoints need from the app. */
export interface OperatorRoutesOptions {
  db: TraceDb;
  auth: UiAuth;
  site: SiteInfo;
  hooks: HostHooks;
  log: ServerLog;
  /** How long a host hook may take (default 10 s). */
  hookTimeoutMs?: number | undefined;
}

/** The operator routes, to mount at `/`. */
export function createOperatorRoutes(
  options: OperatorRoutesOptions,
): Hono<UiEnv> {
  const { db, hooks, site } = options;
  const deps: AuditDeps = { db, log: options.log };
  const timing = options.hookTimeoutMs === undefined
    ? {}
    : { timeoutMs: options.hookTimeoutMs };
  const app = new Hono<UiEnv>();

  app.post("/traces/reveal", async (c) => {
    const request = parseRevealRequest(await readFields(c));
    const { result, entry } = await audited(c, deps, {
      action: "content.reveal",
      reason: request.reason,
      targets: {
        agent_id: request.agent_id,
        root_trace_id: request.root_trace_id,
        event_id: request.event_id,
        ...(request.turn_id ? { turn_id: request.turn_id } : {}),
        ...(request.run_id ? { run_id: request.run_id } : {}),
      },
      found: ({ event }) => ({
        application_id: event.application_id,
        user_id: event.user_id,
        ...(event.turn_id ? { turn_id: event.turn_id } : {}),
      }),
    }, async () => {
      const scope = scopeFilter(c, {
        application_id: request.application_id,
      });
      const event = await findRevealTarget(db, request, scope);
      const preview = await readPreviewContent(db, event);
      if (!preview) {
        throw new NotFoundError(
          "This event has no stored preview: none was recorded, or retention removed it",
        );
      }
      return { event, preview };
    });
    c.header("Cache-Control", "no-store");
    if (isFormBody(c)) {
      return operatorPage(
        c,
        site,
        "Revealed content",
        RevealedBody({ ...result, entry }),
      );
    }
    const { event, preview } = result;
    return c.json({
      event: {
        application_id: event.application_id,
        agent_id: event.agent_id,
        root_trace_id: event.root_trace_id,
        turn_id: event.turn_id,
        run_id: event.run_id,
        event_id: event.event_id,
        kind: event.kind,
        ts: event.ts,
      },
      preview: {
        content: preview.content,
        chars: preview.chars,
        truncated: preview.truncated,
      },
      audit: { seq: entry.seq, entry_id: entry.entry_id },
      note: "shown once; not cached or kept by the server",
    });
  });
  app.all("/traces/reveal", (c) => methodNotAllowed(c, ["POST"]));

  app.post("/traces/account/resolve", async (c) => {
    // An email never travels in a URL: a query string here is refused unread.
    if (new URL(c.req.url).search !== "") {
      throw new HttpRefusal(
        400,
        'This endpoint takes no query string; send {"email": …} in the POST body',
        "query_string",
      );
    }
    const resolver = hooks.identityResolver ?? hookMissing("identityResolver");
    const fields = await readFields(c);
    const { email } = parseAccountRequest(fields);
    delete fields.email;
    const principal = c.get("principal");
    const { result, entry } = await audited(
      c,
      deps,
      {
        action: "account.resolve",
        targets: {},
        found: (resolved) => ({
          user_id: resolved.user_id,
          ...(resolved.application_id
            ? { application_id: resolved.application_id }
            : {}),
        }),
      },
      () =>
        resolveIdentity(resolver, { email, scope: principal.scope }, timing),
    );
    const params = new URLSearchParams({ user_id: result.user_id });
    if (result.application_id) {
      params.set("application_id", result.application_id);
    }
    const find = `/traces/find?${params}`;
    c.header("Cache-Control", "no-store");
    if (isFormBody(c)) {
      return operatorPage(
        c,
        site,
        "Account resolved",
        ResolvedBody({
          userId: result.user_id,
          applicationId: result.application_id ?? null,
          find,
          entry,
        }),
      );
    }
    return c.json({
      user_id: result.user_id,
      application_id: result.application_id ?? null,
      find,
      audit: { seq: entry.seq, entry_id: entry.entry_id },
    });
  });
  app.all("/traces/account/resolve", (c) => methodNotAllowed(c, ["POST"]));

  app.get("/traces/artifact.json", async (c) => {
    const query = parseArtifactQuery(singleParams(c));
    const resolver = hooks.artifactResolver ?? hookMissing("artifactResolver");
    const { result, entry } = await audited(c, deps, {
      action: "artifact.lookup",
      targets: {
        resource: query.ref,
        ...(query.application_id
          ? { application_id: query.application_id }
          : {}),
      },
    }, async () => {
      const scope = scopeFilter(c, {
        application_id: query.application_id,
        user_id: query.user_id,
      });
      // A ref is looked up only when evidence in scope names it.
      const page = await queryTraceEvents(db, {
        ...scope,
        resources: [{ type: query.ref.type, id: query.ref.id }],
        limit: 1,
      });
      if (page.events.length === 0) {
        throw new NotFoundError(
          "No event in your scope references this resource",
        );
      }
      const tenant = tenantOf(scope);
      const state = await resolveArtifact(
        resolver,
        { ref: query.ref, scope: tenant },
        timing,
      );
      return { ref: query.ref, scope: tenant, state };
    });
    c.header("Cache-Control", "no-store");
    return c.json({
      ...result,
      audit: { seq: entry.seq, entry_id: entry.entry_id },
    });
  });

  /** The checked, authorized plan of a selection (hooks only after every check). */
  const planOf = async (selection: ReplaySelection): Promise<ReplayPlan> => {
    const events = await readReplaySelection(db, selection);
    const plan = freezePlan(selection, events);
    await authorizePlan(hooks.resourceAuthorizer!, plan, timing);
    return plan;
  };
  const requireAuthorizer = () => {
    if (!hooks.resourceAuthorizer) hookMissing("resourceAuthorizer");
  };
  const selectionTargets = (selection: ReplaySelection) => ({
    agent_id: selection.agent_id,
    root_trace_id: selection.root_trace_id,
    ...(selection.turn_id ? { turn_id: selection.turn_id } : {}),
    ...(selection.run_id ? { run_id: selection.run_id } : {}),
    ...(selection.application_id
      ? { application_id: selection.application_id }
      : {}),
  });

  app.get("/traces/replay-plan.json", async (c) => {
    const selection = parseReplaySelection(singleParams(c));
    requireAuthorizer();
    const { result, entry } = await audited(c, deps, {
      action: "replay.plan",
      reason: selection.reason ?? null,
      targets: selectionTargets(selection),
      found: (plan) => ({
        application_id: plan.selection.application_id,
        user_id: plan.selection.user_id,
        events: plan.events,
        refs: plan.refs.length,
      }),
    }, () => planOf(scopeFilter(c, selection)));
    c.header("Cache-Control", "no-store");
    return c.json({
      ...result,
      audit: { seq: entry.seq, entry_id: entry.entry_id },
    });
  });

  app.post("/traces/replays", async (c) => {
    const selection = parseReplaySelection(await readFields(c));
    requireAuthorizer();
    const plan = {
      action: "replay.draft" as const,
      reason: selection.reason ?? null,
      targets: selectionTargets(selection),
    };
    let frozen: ReplayPlan;
    try {
      frozen = await planOf(scopeFilter(c, selection));
    } catch (error) {
      return await auditFailure(c, deps, plan, error);
    }
    const principal = c.get("principal");
    let created;
    try {
      created = await createDraft(db, frozen, {
        actor: principal,
        reason: selection.reason ?? null,
        audit: { action: "replay.draft", scope: principal.scope },
      });
    } catch (error) {
      if (
        error instanceof AuditUnavailableError ||
        error instanceof AuditIntegrityError
      ) {
        auditUnavailable(c, error, options.log);
      }
      // The draft itself could not be stored: record that it failed.
      return await auditFailure(c, deps, plan, error);
    }
    if (isFormBody(c)) {
      return operatorPage(
        c,
        site,
        "Replay draft created",
        DraftBody({ draft: created.draft, plan: frozen, entry: created.audit }),
        201,
      );
    }
    return c.json({
      draft: created.draft,
      plan: frozen,
      audit: { seq: created.audit.seq, entry_id: created.audit.entry_id },
    }, 201);
  });

  app.get("/traces/replays.json", async (c) => {
    const drafts = await listDrafts(db, c.get("principal").scope);
    c.header("Cache-Control", "no-store");
    return c.json({ drafts });
  });

  definePage(app, { auth: options.auth, site }, eventPage(db));
  return app;
}

/** Refuses an action whose host hook the app was not given (501). */
function hookMissing(hook: HookName): never {
  throw new HttpRefusal(501, missingHookMessage(hook), `hook_missing:${hook}`, {
    code: "hook_missing",
  });
}
