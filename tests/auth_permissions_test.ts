/** The permission matrix as data, read-only mode, and scope narrowing for each key. */

import assert from "node:assert/strict";
import {
  type Action,
  ACTION_NAMES,
  can,
  decide,
  describeCapabilities,
  narrowScope,
  type Principal,
  readOnlyFromEnv,
  type Role,
  ROLES,
  ScopeError,
  type TenantScope,
} from "../lib/auth/mod.ts";

const principal = (role: Role, scope: TenantScope = {}): Principal => ({
  name: `${role}-x`,
  role,
  scope,
  via: "bearer",
});

Deno.test("the role matrix: viewers read metadata, analysts also look up artifacts and draft replays, operators resolve accounts, admins reveal", () => {
  const expected: Record<Action, Role | null> = {
    public: null,
    session: "viewer",
    "trace.read": "viewer",
    "index.health": "viewer",
    "runs.read": "viewer",
    "runs.write": "operator",
    "index.write": "admin",
    "artifact.lookup": "analyst",
    "replay.plan": "analyst",
    "replay.read": "analyst",
    "replay.draft": "analyst",
    "account.resolve": "operator",
    "content.reveal": "admin",
    "subject.erase": "admin",
  };
  assert.deepEqual([...ACTION_NAMES].sort(), Object.keys(expected).sort());
  for (const action of ACTION_NAMES) {
    const min = expected[action];
    for (const role of ROLES) {
      const allowed = min === null || ROLES.indexOf(role) >= ROLES.indexOf(min);
      assert.equal(
        can(principal(role), action),
        allowed,
        `${role} ${allowed ? "may" : "may not"} ${action}`,
      );
    }
    assert.equal(can(null, action), min === null, `signed out: ${action}`);
  }
});

Deno.test("a tenant-bound account reaches trace actions only, inside its scope", () => {
  const bound = principal("admin", { application_id: "app-1" });
  for (
    const action of [
      "trace.read",
      "artifact.lookup",
      "replay.plan",
      "replay.draft",
      "account.resolve",
      "content.reveal",
    ] as const
  ) assert.equal(can(bound, action), true, action);
  for (
    const action of [
      "index.health",
      "runs.read",
      "runs.write",
      "index.write",
    ] as const
  ) {
    const decision = decide(bound, action);
    assert.equal(decision.allowed, false, action);
    assert.equal(!decision.allowed && decision.reason, "tenant");
  }
  // A present null user binds too.
  assert.equal(can(principal("admin", { user_id: null }), "runs.read"), false);
});

Deno.test("read-only mode refuses every write and nothing else", () => {
  const admin = principal("admin");
  for (const action of ACTION_NAMES) {
    const writes = [
      "runs.write",
      "index.write",
      "replay.draft",
      "subject.erase",
    ].includes(
      action,
    );
    const decision = decide(admin, action, { readOnly: true });
    assert.equal(decision.allowed, !writes, action);
    if (!decision.allowed) {
      assert.equal(decision.reason, "read_only");
      assert.match(decision.message, /TRACE_UI_READ_ONLY=true/);
    }
  }
  assert.equal(readOnlyFromEnv(undefined), false);
  assert.equal(readOnlyFromEnv("false"), false);
  assert.equal(readOnlyFromEnv("true"), true);
  assert.throws(
    () => readOnlyFromEnv("yes"),
    /TRACE_UI_READ_ONLY must be true or false/,
  );
  // An unexpanded CI variable must not leave a server writable.
  assert.throws(
    () => readOnlyFromEnv(""),
    /^ConfigError: TRACE_UI_READ_ONLY is set but empty; set it to true or false, or unset it$/,
  );
});

Deno.test("narrowScope() fills bound keys, keeps open ones, and refuses a wider request for each key", async (t) => {
  const cases: {
    name: string;
    scope: TenantScope;
    asked: { application_id?: string; user_id?: string | null };
    result?: { application_id?: string; user_id?: string | null };
    refused?: "application_id" | "user_id";
  }[] = [
    {
      name: "unscoped passes through",
      scope: {},
      asked: { application_id: "app-2", user_id: null },
      result: { application_id: "app-2", user_id: null },
    },
    {
      name: "a bound application is filled in",
      scope: { application_id: "app-1" },
      asked: {},
      result: { application_id: "app-1" },
    },
    {
      name: "repeating the bound application is fine",
      scope: { application_id: "app-1" },
      asked: { application_id: "app-1" },
      result: { application_id: "app-1" },
    },
    {
      name: "another application is refused",
      scope: { application_id: "app-1" },
      asked: { application_id: "app-2" },
      refused: "application_id",
    },
    {
      name: "an open user may be narrowed",
      scope: { application_id: "app-1" },
      asked: { user_id: "user-ada" },
      result: { application_id: "app-1", user_id: "user-ada" },
    },
    {
      name: "an open user may be narrowed to anonymous",
      scope: { application_id: "app-1" },
      asked: { user_id: null },
      result: { application_id: "app-1", user_id: null },
    },
    {
      name: "a bound user is filled in",
      scope: { user_id: "user-ada" },
      asked: {},
      result: { user_id: "user-ada" },
    },
    {
      name: "another user is refused",
      scope: { user_id: "user-ada" },
      asked: { user_id: "user-bo" },
      refused: "user_id",
    },
    {
      name: "anonymous is refused to a user-bound account",
      scope: { user_id: "user-ada" },
      asked: { user_id: null },
      refused: "user_id",
    },
    {
      name: "anonymous-bound is filled in",
      scope: { user_id: null },
      asked: {},
      result: { user_id: null },
    },
    {
      name: "anonymous-bound may repeat anonymous",
      scope: { user_id: null },
      asked: { user_id: null },
      result: { user_id: null },
    },
    {
      name: "a user is refused to an anonymous-bound account",
      scope: { user_id: null },
      asked: { user_id: "user-ada" },
      refused: "user_id",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      if (c.refused) {
        assert.throws(
          () => narrowScope(c.scope, c.asked),
          (error: unknown) =>
            error instanceof ScopeError && error.key === c.refused &&
            error.code === "forbidden" &&
            // Content-free: the requested value is not repeated.
            !Object.values(c.asked).some((v) =>
              typeof v === "string" && error.message.includes(v)
            ),
        );
      } else {
        assert.deepEqual(narrowScope(c.scope, c.asked), c.result);
      }
    });
  }
});

Deno.test("describeCapabilities() says for each action whether it is available, and why not: role, tenant, read-only or a missing hook", () => {
  const hooks = {
    identityResolver: true,
    artifactResolver: false,
    resourceAuthorizer: true,
  };
  const analyst = describeCapabilities(
    principal("analyst", { application_id: "app-1" }),
    { hooks, readOnly: true },
  );
  assert.deepEqual(analyst.principal, {
    name: "analyst-x",
    role: "analyst",
    scope: { application_id: "app-1" },
    tenant_bound: true,
  });
  const by = Object.fromEntries(analyst.actions.map((a) => [a.action, a]));
  assert.equal(by["trace.read"]!.allowed, true);
  assert.equal(by["replay.plan"]!.allowed, true);
  assert.equal(by["replay.plan"]!.endpoint, "GET /traces/replay-plan.json");
  assert.deepEqual(
    [by["replay.draft"]!.reason, by["artifact.lookup"]!.reason],
    ["read_only", "hook_missing"],
  );
  assert.match(by["artifact.lookup"]!.message!, /no artifactResolver/);
  assert.equal(by["account.resolve"]!.reason, "role");
  assert.equal(by["runs.read"]!.reason, "tenant");
  assert.equal(by["public"], undefined, "public actions are not listed");
  const admin = describeCapabilities(principal("admin"), {
    hooks,
    readOnly: false,
  });
  assert.ok(
    admin.actions.every((a) => a.allowed || a.reason === "hook_missing"),
  );
});
