import assert from "node:assert/strict";
import { Base64Part } from "../protocol/base64.ts";
import {
  BinaryFrame,
  decodeBinaryFrame,
  encodeBinaryFrame,
  parseBinaryFrameHeader,
  placePayload,
} from "./binary_frame.ts";

const bytes = (...b: number[]): Uint8Array => new Uint8Array(b);

Deno.test("parseBinaryFrameHeader: size, field and message; anything else is no header", () => {
  assert.deepEqual(parseBinaryFrameHeader('#3 dataBase64 {"id":1}'), {
    text: '{"id":1}',
    field: "dataBase64",
    byteLength: 3,
  });
  assert.deepEqual(parseBinaryFrameHeader("#0 data {}")?.byteLength, 0);
  for (
    const line of [
      '#03 dataBase64 {"id":1}', // leading zero
      '#-3 dataBase64 {"id":1}',
      '#3 {"id":1}', // no field
      '#3  dataBase64 {"id":1}',
      "#3 data-base64 {}",
      "#1234567890123456 data {}", // 16 digits: past any file
      '# 3 dataBase64 {"id":1}',
      '{"id":1}',
    ]
  ) {
    assert.equal(parseBinaryFrameHeader(line), undefined, line);
  }
});

Deno.test("encodeBinaryFrame and decodeBinaryFrame: header, newline, payload, sizes checked", () => {
  const payload = bytes(0x0a, 0x23, 0, 255, 0x0a);
  const frame = new BinaryFrame('{"id":7,"result":{"eof":true}}', "dataBase64", payload);
  const message = encodeBinaryFrame(frame);
  assert.equal(
    new TextDecoder().decode(message.subarray(0, message.length - 5)),
    '#5 dataBase64 {"id":7,"result":{"eof":true}}\n',
  );
  const decoded = decodeBinaryFrame(message)!;
  assert.equal(decoded.header.text, '{"id":7,"result":{"eof":true}}');
  assert.equal(decoded.header.field, "dataBase64");
  assert.deepEqual(decoded.bytes, payload);
  assert.equal(decodeBinaryFrame(message.subarray(0, message.length - 1)), undefined, "short");
  assert.equal(decodeBinaryFrame(new TextEncoder().encode('{"id":1}')), undefined, "JSON");
  assert.equal(decodeBinaryFrame(bytes(0x23, 0x31)), undefined, "no newline");
});

Deno.test("placePayload: into params of requests, result of responses, never over a field", () => {
  const request: Record<string, unknown> = {
    id: 1,
    method: "fs/writeFile",
    params: { path: "/x" },
  };
  assert.equal(placePayload(request, "dataBase64", bytes(9)), true);
  const placed = (request.params as Record<string, unknown>).dataBase64;
  assert.ok(placed instanceof Base64Part);
  assert.deepEqual(placed.bytes, bytes(9));
  const response: Record<string, unknown> = { id: 1, result: { eof: true } };
  assert.equal(placePayload(response, "dataBase64", bytes(8)), true);
  assert.equal(String((response.result as Record<string, unknown>).dataBase64), "CA==");
  assert.equal(placePayload({ id: 1, method: "m", params: { data: "x" } }, "data", bytes()), false);
  assert.equal(placePayload({ id: 1, method: "m" }, "data", bytes()), false);
  assert.equal(placePayload({ id: 1, method: "m", params: [1] }, "data", bytes()), false);
  assert.equal(placePayload(null, "data", bytes()), false);
});
