import assert from "node:assert/strict";
import { concatBytes, readBounded } from "../lib/bytes.ts";

function streamOf(chunks: number[], onCancel: () => void) {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at === chunks.length) return controller.close();
      controller.enqueue(new Uint8Array(chunks[at++]!).fill(at));
    },
    cancel: onCancel,
  });
}

Deno.test("readBounded reads a stream whole up to its bound, and cancels it past the bound", async () => {
  let cancelled = false;
  const whole = await readBounded(streamOf([3, 4], () => {}), 7);
  assert.deepEqual([...whole!], [1, 1, 1, 2, 2, 2, 2]);
  const past = await readBounded(
    streamOf([3, 4, 100], () => void (cancelled = true)),
    6,
  );
  assert.equal(past, null);
  assert.ok(cancelled, "the source is told to stop");
  assert.deepEqual([...(await readBounded(streamOf([], () => {}), 0))!], []);
});

Deno.test("concatBytes joins chunks in order, and nothing into an empty array", () => {
  assert.deepEqual(
    [...concatBytes([
      new Uint8Array([1, 2]),
      new Uint8Array(0),
      new Uint8Array([3]),
    ])],
    [1, 2, 3],
  );
  assert.equal(concatBytes([]).byteLength, 0);
});
