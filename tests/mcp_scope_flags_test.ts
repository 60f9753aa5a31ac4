/** The local trace scope `trace mcp` and `trace mcp-config` bind from their flags. */

import assert from "node:assert/strict";
import { scopeArgs, scopeFromFlags } from "../cli/mcp.ts";
import { UsageError } from "../lib/errors.ts";
import { describeScope } from "../lib/auth/scope.ts";

Deno.test("--all-users opens every user, of one application when one is bound, and mcp-config passes it on", () => {
  const every = scopeFromFlags({ "all-users": true });
  assert.deepEqual(every, {});
  assert.equal(describeScope(every), "every tenant");
  assert.deepEqual(scopeArgs(every), ["--all-users"]);
  const app = scopeFromFlags({ application: "app-1", "all-users": true });
  assert.deepEqual(app, { application_id: "app-1" });
  assert.equal(describeScope(app), 'application "app-1"');
  assert.deepEqual(scopeArgs(app), ["--application", "app-1", "--all-users"]);
  // The default stays anonymous events only.
  assert.deepEqual(scopeFromFlags({}), { user_id: null });
  assert.deepEqual(scopeArgs(scopeFromFlags({})), ["--anonymous"]);
  assert.deepEqual(scopeArgs(scopeFromFlags({ user: "u-1" })), [
    "--user",
    "u-1",
  ]);
});

Deno.test("two of --user, --anonymous and --all-users are refused, naming both", () => {
  const cases: [Parameters<typeof scopeFromFlags>[0], string][] = [
    [{ user: "u-1", anonymous: true }, "--user ID and --anonymous"],
    [{ user: "u-1", "all-users": true }, "--user ID and --all-users"],
    [{ anonymous: true, "all-users": true }, "--anonymous and --all-users"],
  ];
  for (const [values, named] of cases) {
    assert.throws(
      () => scopeFromFlags(values),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message ===
          `Give one of --user ID, --anonymous or --all-users, not ${named}; see trace mcp --help`,
    );
  }
});
