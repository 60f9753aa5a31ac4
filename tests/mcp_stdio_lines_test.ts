/** The strict line reader between `trace mcp`'s stdin and the SDK's stdio transport. */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import {
  leadingId,
  type RefusedLine,
  strictStdinLines,
} from "../lib/mcp/stdio_lines.ts";

/** What passes `chunks` through the reader, and what it refused. */
async function read(
  chunks: (string | Buffer)[],
  maxLineBytes?: number,
): Promise<{ passed: string; refused: RefusedLine[] }> {
  const refused: RefusedLine[] = [];
  const stream = strictStdinLines({
    onRefused: (line) => refused.push(line),
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
  });
  const out: Buffer[] = [];
  stream.on("data", (data: Buffer) => out.push(data));
  const ended = new Promise((resolve) => stream.on("end", resolve));
  for (const chunk of chunks) {
    stream.write(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  }
  stream.end();
  await ended;
  return { passed: Buffer.concat(out).toString("utf8"), refused };
}

const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';

Deno.test("strictStdinLines() passes valid lines byte for byte, however stdin splits them", async () => {
  const text = PING + '{"jsonrpc":"2.0","id":2,"method":"é"}\r\n' + PING;
  const bytes = Buffer.from(text);
  // One byte at a time splits the two-byte "é" too.
  const split = [...bytes].map((b) => Buffer.from([b]));
  assert.deepEqual(await read(split), { passed: text, refused: [] });
  assert.deepEqual(await read([text]), { passed: text, refused: [] });
});

Deno.test("strictStdinLines() holds back a line with a key given twice and names its line", async () => {
  const { passed, refused } = await read([
    PING,
    '{"jsonrpc":"2.0","id":2,',
    '"id":3,"method":"ping"}\n',
    PING,
  ]);
  assert.equal(passed, PING + PING);
  assert.deepEqual(refused.map((r) => [r.line, r.reason, r.code, r.id]), [
    [2, "a key given twice", -32700, null],
  ]);
});

Deno.test('strictStdinLines() holds back a message without "jsonrpc": "2.0" with its id, and passes arrays on', async () => {
  const batches = '[]\n[{"jsonrpc":"2.0","id":5,"method":"ping"}]\n';
  const { passed, refused } = await read([
    '{"id":7,"method":"ping"}\n',
    '{"jsonrpc":"1.0","id":"x","method":"ping"}\n',
    '{"id":[7],"method":"ping"}\n',
    "42\n",
    batches,
    PING,
  ]);
  // The stdio transport takes no batch: an empty one is refused there as every batch is.
  assert.equal(passed, batches + PING);
  assert.deepEqual(
    refused.map((r) => [r.line, r.code, r.id, r.column]),
    [[1, -32600, 7, null], [2, -32600, "x", null], [3, -32600, null, null], [
      4,
      -32600,
      null,
      null,
    ]],
  );
  assert.equal(
    refused[0]?.reason,
    'a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0" (got an object without "jsonrpc")',
  );
});

Deno.test("strictStdinLines() holds back a JSON-RPC 2.0 line that is no request, response or notification, with its id, and passes responses on", async () => {
  const responses = '{"jsonrpc":"2.0","id":3,"result":{}}\n' +
    '{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}\n';
  const { passed, refused } = await read([
    '{"jsonrpc":"2.0","id":7}\n',
    '{"jsonrpc":"2.0","id":"x","method":[]}\n',
    '{"jsonrpc":"2.0","id":2.5,"method":"ping"}\n',
    '{"jsonrpc":"2.0","id":8,"method":"ping","params":[1]}\n',
    '{"jsonrpc":"2.0","id":9,"method":"ping","extra":true}\n',
    responses,
    PING,
  ]);
  assert.equal(passed, responses + PING);
  assert.deepEqual(refused.map((r) => [r.line, r.code, r.id, r.reason]), [
    [
      1,
      -32600,
      7,
      'a JSON-RPC 2.0 message has "method" (a request or notification) or "result" or "error" (a response) (got none of them)',
    ],
    [
      2,
      -32600,
      "x",
      '"method" is a string, the name of the method to call (got an array)',
    ],
    [
      3,
      -32600,
      null,
      '"id" is a string or an integer (got a number with a fraction)',
    ],
    [
      4,
      -32600,
      8,
      '"params" is an object of named parameters (got an array)',
    ],
    [
      5,
      -32600,
      9,
      'a request or notification has only "jsonrpc", "id", "method" and "params" (got 1 other member)',
    ],
  ]);
});

Deno.test("strictStdinLines() refuses an over-long line with the id at its head, skips the rest unread, and reads the next one", async () => {
  const long = `{"jsonrpc":"2.0","id":7,"method":"${"x".repeat(100)}"}\n`;
  const chunks = long.match(/.{1,16}/gs)!;
  const { passed, refused } = await read(
    [...chunks, '{"id":1,"id":2}\n', PING],
    48,
  );
  assert.equal(passed, PING, "no part of the long line reaches the transport");
  assert.deepEqual(refused.map((r) => [r.line, r.code, r.id, r.column]), [
    [1, -32000, 7, null],
    [2, -32700, null, 9],
  ]);
  assert.equal(
    refused[0]!.reason,
    "the message exceeds 48 bytes; send smaller tool arguments",
  );
});

Deno.test("strictStdinLines() refuses an over-long line as soon as it passes the bound, before its newline comes", () => {
  const refused: RefusedLine[] = [];
  const stream = strictStdinLines({
    onRefused: (line) => refused.push(line),
    maxLineBytes: 48,
  });
  stream.on("data", () => {});
  stream.write(Buffer.from(PING + `{"jsonrpc":"2.0","id":"a",`));
  assert.equal(refused.length, 0);
  stream.write(Buffer.from(`"method":"${"x".repeat(40)}`));
  assert.deepEqual(refused.map((r) => [r.line, r.code, r.id]), [
    [2, -32000, "a"],
  ]);
  stream.end();
});

Deno.test("strictStdinLines() takes a line of exactly the bound, its line ending not counted", async () => {
  const line = `{"jsonrpc":"2.0","id":1,"method":"${"x".repeat(10)}"}`;
  const bound = Buffer.byteLength(line);
  for (const ending of ["\n", "\r\n"]) {
    const text = line + ending;
    // Split before the newline too: the "\r" then ends the chunk held.
    const split = [text.slice(0, -1), text.slice(-1)];
    for (const chunks of [[text], split]) {
      assert.deepEqual(await read(chunks, bound), {
        passed: text,
        refused: [],
      });
      const over = await read(chunks, bound - 1);
      assert.deepEqual(over.refused.map((r) => r.code), [-32000]);
    }
  }
});

Deno.test("strictStdinLines() drops blank lines without answering them", async () => {
  const { passed, refused } = await read(["\n", "\r\n", " \t\n", PING, "\n"]);
  assert.deepEqual({ passed, refused }, { passed: PING, refused: [] });
  // Lines are still counted: a refusal after blank lines names its own line.
  const after = await read(["\n\r\n", "nope\n"]);
  assert.deepEqual(after.refused.map((r) => r.line), [3]);
});

Deno.test("leadingId() reads the id a request gives before any nested value, else null", () => {
  const cases: [string, string | number | null][] = [
    ['{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"a', 2],
    ['{ "id" : "abc" , "params": {', "abc"],
    ['{"jsonrpc":"2.0","method":"x","id":-4}', -4],
    ['{"jsonrpc":"2.0","id":"a\\"b","method"', 'a"b'],
    // After a nested value, or cut before its end: not read.
    ['{"params":{"id":1},"id":2,', null],
    ['{"jsonrpc":"2.0","id":12', null],
    // Ids MCP does not take, and no object at all.
    ['{"id":1.5,"method":"x"}', null],
    ['{"id":null,"method":"x"}', null],
    ['{"id":12345678901234567890,"method":"x"}', null],
    ['[{"id":1}]', null],
    ["aaaa", null],
  ];
  for (const [head, id] of cases) assert.equal(leadingId(head), id, head);
});
