/** The browser bundle: committed module in step with its sources, served hashed and cached for good. */

import assert from "node:assert/strict";
import { renderBundleModule } from "../scripts/build_ui.ts";
import {
  CLIENT_SCRIPT,
  CLIENT_SCRIPT_HASH,
  STYLESHEET,
  STYLESHEET_HASH,
} from "../routes/ui/_client_bundle.ts";
import { SCRIPT_PATH, STYLE_PATH } from "../routes/ui/assets.ts";
import { at, page, withUiApp } from "./browser/_server.ts";

Deno.test({
  name:
    "routes/ui/_client_bundle.ts matches ui/client/ and ui/style.css (run deno task build:ui)",
  // esbuild keeps a service child process between builds; the build
  // function stops it, but the sanitizers see its pipes come and go.
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const committed = await Deno.readTextFile(
      new URL("../routes/ui/_client_bundle.ts", import.meta.url),
    );
    const fresh = await renderBundleModule();
    assert.ok(
      committed === fresh,
      "routes/ui/_client_bundle.ts is out of date with ui/; run deno task build:ui and commit the result",
    );
  },
});

Deno.test("the bundle's hashes are the SHA-256 of its contents", async () => {
  const hash = async (text: string) =>
    [
      ...new Uint8Array(
        await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
      ),
    ].slice(0, 8).map((b) => b.toString(16).padStart(2, "0")).join("");
  assert.equal(CLIENT_SCRIPT_HASH, await hash(CLIENT_SCRIPT));
  assert.equal(STYLESHEET_HASH, await hash(STYLESHEET));
  assert.ok(SCRIPT_PATH.includes(CLIENT_SCRIPT_HASH));
  assert.ok(STYLE_PATH.includes(STYLESHEET_HASH));
});

Deno.test("the assets are served without sign-in, hashed, typed and cached for a year", async () => {
  await withUiApp({}, async ({ app }) => {
    const script = await app.request(at(SCRIPT_PATH), page());
    assert.equal(script.status, 200);
    assert.equal(
      script.headers.get("content-type"),
      "text/javascript; charset=utf-8",
    );
    assert.equal(
      script.headers.get("cache-control"),
      "public, max-age=31536000, immutable",
    );
    assert.equal(await script.text(), CLIENT_SCRIPT);
    const style = await app.request(at(STYLE_PATH), page());
    assert.equal(style.headers.get("content-type"), "text/css; charset=utf-8");
    assert.equal(await style.text(), STYLESHEET);
    const stale = await app.request(at("/ui/app.0000000000000000.js"), page());
    assert.equal(stale.status, 404);
    await stale.body?.cancel();
  });
});
