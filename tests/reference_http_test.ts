/** Every reference system once over loopback HTTP, through the strict HTTP transport. */

import assert from "node:assert/strict";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import { runReferenceSystem } from "../lib/reference/suite.ts";
import { REFERENCE_SYSTEMS } from "../lib/reference/systems.ts";
import { referenceFetchHandler } from "../lib/reference/transport.ts";
import type { StagingTransport } from "../lib/contract/protocol.ts";
import type { ReferencePipeline } from "../lib/memory/pipeline.ts";

function serveOverHttp(system: ReferencePipeline): Promise<StagingTransport> {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    referenceFetchHandler(system),
  );
  const http = createHttpTransport({
    base_url: `http://127.0.0.1:${server.addr.port}`,
  });
  return Promise.resolve({
    post: (op, body, options) => http.post(op, body, options),
    close: () => server.shutdown(),
  });
}

for (const spec of REFERENCE_SYSTEMS) {
  Deno.test(`runReferenceSystem() reaches the expected outcome of ${spec.name} over loopback HTTP`, async () => {
    const result = await runReferenceSystem(spec, { transport: serveOverHttp });
    assert.deepEqual(result.evaluation.mismatches, []);
    assert.equal(result.report.verdict, spec.expected.verdict);
    assert.equal(result.report.requests.failed, 0);
  });
}

Deno.test("referenceFetchHandler() refuses other methods, paths and malformed bodies", async () => {
  const handler = referenceFetchHandler({
    handle: () => Promise.resolve({ acknowledged: true }),
  });
  const get = await handler(new Request("http://x/delete"));
  assert.equal(get.status, 405);
  const missing = await handler(
    new Request("http://x/nothing", { method: "POST", body: "{}" }),
  );
  assert.equal(missing.status, 404);
  const bad = await handler(
    new Request("http://x/query", { method: "POST", body: "[1]" }),
  );
  assert.equal(bad.status, 400);
  const ok = await handler(
    new Request("http://x/delete", { method: "POST", body: "{}" }),
  );
  assert.deepEqual(await ok.json(), { acknowledged: true });
});
