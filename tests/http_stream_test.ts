/**
 * Streamed `http/request` bodies in the Codex CLI's dialect: the answer
 * first, then `http/request/bodyDelta` notifications numbered from 1 and
 * ended by an empty `done` one; a requestId reserved while its stream is
 * active; bodies of several MB reassembled byte for byte; a body that
 * stops early or stalls ending with `error`. The origin holds bodies until
 * the test releases them, so that nothing depends on timing.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { bigBody, NO_PROXY_ENV, withOrigin } from "./http_fixture.ts";
import { type Msg, type TestServer, unb64 } from "./harness.ts";
import { codexServer } from "./server_helpers.ts";

/** A Codex-dialect server that reaches the test origin directly. */
const httpServer = () => codexServer({ env: NO_PROXY_ENV });

function streamed(s: TestServer, requestId: string, url: string, extra: Msg = {}): Promise<Msg> {
  return s.request("http/request", {
    method: "GET",
    url,
    requestId,
    streamResponse: true,
    ...extra,
  });
}

const isDelta = (id: string) => (m: Msg) =>
  m.method === "http/request/bodyDelta" && m.params.requestId === id;

/** The deltas of `id` received so far. */
const deltasOf = (s: TestServer, id: string) => s.messages.filter(isDelta(id)).map((m) => m.params);

/** Wait for the last delta of `id`; returns all of them. */
async function finished(s: TestServer, id: string): Promise<Msg[]> {
  await s.waitFor((m) => isDelta(id)(m) && m.params.done, 30_000, `the end of ${id}`);
  return deltasOf(s, id);
}

Deno.test("http/request streamed: the head answers, then numbered deltas and an empty done", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    const res = await streamed(s, "st-1", origin.url("/held/one"));
    assert.equal(res.result.status, 200, JSON.stringify(res));
    assert.equal(res.result.bodyBase64, "");
    assert.ok(res.result.headers.some((h: Msg) => h.name === "content-type"));
    // The first part arrives while the origin still holds the rest.
    const first = await s.waitFor(isDelta("st-1"));
    assert.deepEqual(first.params, {
      requestId: "st-1",
      seq: 1,
      deltaBase64: Buffer.from("first;").toString("base64"),
      done: false,
      error: null,
    });
    assert.ok(s.messages.indexOf(res) < s.messages.indexOf(first), "the answer comes first");
    assert.equal(deltasOf(s, "st-1").some((d) => d.done), false);
    origin.release("one");
    const deltas = await finished(s, "st-1");
    assert.deepEqual(deltas.map((d) => d.seq), deltas.map((_, i) => i + 1), "no gaps");
    assert.equal(deltas.map((d) => unb64(d.deltaBase64)).join(""), "first;second");
    assert.deepEqual(deltas.at(-1), {
      requestId: "st-1",
      seq: deltas.length,
      deltaBase64: "",
      done: true,
      error: null,
    });
    assert.equal(deltas.filter((d) => d.done).length, 1);
  });
});

Deno.test("http/request streamed: an active requestId is refused until its stream ends", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    assert.equal((await streamed(s, "dup", origin.url("/held/dup"))).result?.status, 200);
    await origin.heldOpen("dup");
    const again = await streamed(s, "dup", origin.url("/echo"));
    assert.equal(again.error?.code, -32602);
    assert.equal(
      again.error.message,
      "http/request streamResponse requestId `dup` is already active",
    );
    // Only streamed ids are reserved: a buffered request may share it.
    const buffered = await s.request("http/request", {
      method: "GET",
      url: origin.url("/echo"),
      requestId: "dup",
    });
    assert.equal(buffered.result?.status, 200);
    origin.release("dup");
    await finished(s, "dup");
    const reused = await streamed(s, "dup", origin.url("/echo"));
    assert.equal(reused.result?.status, 200, "free again once done");
    const dones = () => deltasOf(s, "dup").filter((d) => d.done).length;
    await s.waitFor(() => dones() === 2, 20_000, "the end of the second dup");
    // A failed request does not keep its id either.
    const failed = await streamed(s, "gone", "http://127.0.0.1:1/");
    assert.equal(failed.error?.code, -32603);
    const retry = await streamed(s, "gone", origin.url("/echo"));
    assert.equal(retry.result?.status, 200);
  });
});

Deno.test("http/request: a multi-MB body is reassembled exactly, streamed and buffered", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    const n = 5 * 1024 * 1024 + 123;
    const want = bigBody(n);
    const res = await streamed(s, "big", origin.url(`/big?n=${n}`));
    assert.deepEqual(
      res.result.headers.find((h: Msg) => h.name === "content-length"),
      { name: "content-length", value: String(n) },
    );
    const deltas = await finished(s, "big");
    assert.ok(deltas.length > 2, "sent in several pieces");
    assert.deepEqual(deltas.map((d) => d.seq), deltas.map((_, i) => i + 1));
    const got = Buffer.concat(deltas.map((d) => Buffer.from(d.deltaBase64, "base64")));
    assert.equal(got.byteLength, n);
    assert.ok(got.equals(want), "the same bytes in the same order");
    assert.equal(deltas.at(-1)!.error, null);
    const whole = await s.request("http/request", {
      method: "GET",
      url: origin.url(`/big?n=${2 * 1024 * 1024}`),
      requestId: "big-buffered",
    });
    assert.ok(Buffer.from(whole.result.bodyBase64, "base64").equals(bigBody(2 * 1024 * 1024)));
  });
});

Deno.test("http/request streamed: a body cut short ends with an error", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    assert.equal((await streamed(s, "cut", origin.url("/cut"))).result?.status, 200);
    const deltas = await finished(s, "cut");
    const last = deltas.at(-1)!;
    assert.equal(last.deltaBase64, "");
    assert.equal(typeof last.error, "string");
    assert.ok(last.error.length > 0);
    assert.equal(deltas.slice(0, -1).map((d) => unb64(d.deltaBase64)).join(""), "short");
    assert.equal(deltas.filter((d) => d.done).length, 1);
  });
});

Deno.test("http/request streamed: timeoutMs ends a stalled body with an error", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    const res = await streamed(s, "slow", origin.url("/hang"), { timeoutMs: 500 });
    if (res.error) {
      // A machine too loaded to see the head within the deadline: the request fails instead.
      assert.equal(res.error.code, -32603);
      assert.equal(res.error.message, "http/request failed: timed out after 500 ms");
      return;
    }
    const deltas = await finished(s, "slow");
    assert.deepEqual(deltas.at(-1), {
      requestId: "slow",
      seq: deltas.length,
      deltaBase64: "",
      done: true,
      error: "timed out after 500 ms",
    });
    assert.equal(deltas.slice(0, -1).map((d) => unb64(d.deltaBase64)).join(""), "partial");
  });
});
