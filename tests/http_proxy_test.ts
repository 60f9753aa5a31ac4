/** Environment proxies are ignored: the request goes straight to the target. */

import assert from "node:assert/strict";
import { withCountingListener } from "./_tcp_servers.ts";

const CLIENT = new URL("../lib/http/strict_client.ts", import.meta.url).href;

Deno.test("createHttpTransport() ignores HTTP_PROXY, HTTPS_PROXY and ALL_PROXY", async () => {
  await withCountingListener(async (proxyUrl, proxyConnections) => {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response(
          '{"complete":true,"source_records":0,"vector_records":0,"cache_records":0}',
          {
            headers: { "content-type": "application/json" },
          },
        ),
    );
    try {
      const script = `
        import { createHttpTransport } from "${CLIENT}";
        const t = createHttpTransport({ base_url: "http://127.0.0.1:${server.addr.port}" });
        const answer = await t.post("inventory", { namespace: "n" }, { timeoutMs: 5000 });
        console.log(JSON.stringify(answer));
      `;
      const env: Record<string, string> = {};
      for (
        const name of [
          "HTTP_PROXY",
          "HTTPS_PROXY",
          "ALL_PROXY",
          "http_proxy",
          "https_proxy",
          "all_proxy",
        ]
      ) {
        env[name] = proxyUrl;
      }
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["eval", script],
        env: { ...env, NO_PROXY: "", no_proxy: "", NO_COLOR: "1" },
        cwd: new URL("..", import.meta.url).pathname,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      assert.equal(
        JSON.parse(new TextDecoder().decode(out.stdout)).complete,
        true,
      );
      assert.equal(proxyConnections(), 0, "the proxy received a connection");
    } finally {
      await server.shutdown();
    }
  });
});
