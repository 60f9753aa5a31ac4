/** Every memory-pipeline reference system once over loopback HTTP, through the demo's staging app and the strict HTTP transport. */

import assert from "node:assert/strict";
import { createHttpTransport } from "../lib/http/strict_client.ts";
import { runReferenceSystem } from "../lib/reference/suite.ts";
import { REFERENCE_SYSTEMS } from "../lib/reference/systems.ts";
import type { StagingTransport } from "../lib/contract/protocol.ts";
import type { MemoryPipeline } from "../lib/memory/mod.ts";
import { createStagingApp } from "../routes/staging.ts";

function serveOverHttp(system: MemoryPipeline): Promise<StagingTransport> {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    createStagingApp(system).fetch,
  );
  const http = createHttpTransport({
    base_url: `http://127.0.0.1:${server.addr.port}`,
  });
  return Promise.resolve({
    post: (op, body, options) => http.post(op, body, options),
    close: () => server.shutdown(),
  });
}

// The trace-index systems are served by trace serve --staging-adapter (tests/self_contract_*).
for (const spec of REFERENCE_SYSTEMS.filter((s) => s.kind === "pipeline")) {
  Deno.test(`runReferenceSystem() reaches the expected outcome of ${spec.name} over loopback HTTP`, async () => {
    const result = await runReferenceSystem(spec, { transport: serveOverHttp });
    assert.deepEqual(result.evaluation.mismatches, []);
    assert.equal(result.report.verdict, spec.expected.verdict);
    assert.equal(result.report.requests.failed, 0);
  });
}
