import assert from "node:assert/strict";
import { ChunkedBodyEnd, isChunkedHead } from "../routes/_chunked_end.ts";

const encoder = new TextEncoder();

/** Feeds `text` to a fresh tracker in pieces of `step` bytes; the byte count at which it was done, or -1. */
function doneAfter(text: string, step: number): number {
  const bytes = encoder.encode(text);
  const body = new ChunkedBodyEnd();
  for (let at = 0; at < bytes.length; at += step) {
    body.feed(bytes.subarray(at, at + step));
    if (body.done) return Math.min(at + step, bytes.length);
  }
  return -1;
}

Deno.test("ChunkedBodyEnd is done at the last chunk's end, however the bytes are split", () => {
  // Data that looks like a last chunk does not end the body.
  const body = "5\r\n0\r\n\r\n\r\n3;ext=1\r\nabc\r\n2 \t\r\nde\r\n0\r\n\r\n";
  for (const step of [1, 2, 3, 7, body.length]) {
    assert.equal(doneAfter(body, step), body.length, `step ${step}`);
  }
});

Deno.test("ChunkedBodyEnd waits for trailer lines after the last chunk", () => {
  const body = "2\r\nhi\r\n0\r\nX-Sum: 1\r\n\r\n";
  assert.equal(doneAfter(body, 1), body.length);
  assert.equal(doneAfter(body.slice(0, -2), 1), -1, "trailer not ended");
  assert.equal(doneAfter("A\r\n0123456789\r\n", 4), -1, "no last chunk yet");
});

Deno.test("ChunkedBodyEnd stops following framing it cannot read", () => {
  // The server refuses such a body itself; the guard only must not wait for it.
  assert.notEqual(doneAfter("zz\r\n", 1), -1);
  assert.notEqual(doneAfter("\r\n", 1), -1);
  assert.notEqual(doneAfter("1\r\naXY", 1), -1, "no CRLF after data");
});

Deno.test("isChunkedHead() reads the last transfer coding of the head", () => {
  const head = (te: string) => `POST / HTTP/1.1\r\nHost: a\r\n${te}\r\n\r\n`;
  assert.equal(isChunkedHead(head("Transfer-Encoding: chunked")), true);
  assert.equal(isChunkedHead(head("transfer-encoding: gzip, Chunked")), true);
  assert.equal(isChunkedHead(head("Content-Length: 5")), false);
  assert.equal(isChunkedHead(head("Transfer-Encoding: chunked, gzip")), false);
});
