/**
 * The client's typed calls of the [ext]s v0 shares with the Codex dialect:
 * file handles and a buffered `http/request`, against the real server.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { ExecServerClient, MAX_BLOCK_BYTES, ServerError } from "../mod.ts";
import { ROOT, serverCommand } from "./harness.ts";

function spawnServer(): Promise<ExecServerClient> {
  const [cmd, ...rest] = serverCommand();
  return ExecServerClient.spawnStdio(cmd, rest, { cwd: ROOT });
}

Deno.test("client: file handles read and replace a file in blocks", async () => {
  const dir = mkdtempSync(join(tmpdir(), "client-ext-"));
  const client = await spawnServer();
  try {
    assert.deepEqual(client.capabilities.fileHandles, { maxOpen: 128, maxBlockBytes: 1 << 20 });
    const original = new Uint8Array(randomBytes(2 * MAX_BLOCK_BYTES + 123));
    writeFileSync(join(dir, "in"), original);
    await client.fsOpen("r", join(dir, "in"));
    const parts: Uint8Array[] = [];
    for (let at = 0;; at += MAX_BLOCK_BYTES) {
      const { data, eof } = await client.fsReadBlock("r", at, MAX_BLOCK_BYTES);
      parts.push(data);
      if (eof) break;
    }
    await client.fsClose("r");
    assert.deepEqual(Buffer.concat(parts), Buffer.from(original));

    writeFileSync(join(dir, "out"), "old");
    await client.fsOpen("w", join(dir, "out"), "replace");
    // Last block first: blocks may come in any order.
    await client.fsWriteBlock("w", 3, new TextEncoder().encode("def"));
    await client.fsWriteBlock("w", 0, new TextEncoder().encode("abc"));
    assert.equal(readFileSync(join(dir, "out"), "utf8"), "old", "unchanged until the close");
    await client.fsClose("w");
    assert.equal(readFileSync(join(dir, "out"), "utf8"), "abcdef");
    assert.deepEqual(readdirSync(dir).sort(), ["in", "out"], "no temporary file left");

    const unknown = await client.fsReadBlock("r", 0, 1).catch((e) => e);
    assert.ok(unknown instanceof ServerError);
    assert.equal(unknown.code, -32600);
    assert.match(unknown.message, /unknown file handle `r`/);
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("client: httpRequest is made from the server and answered whole", async () => {
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => body += d);
    req.on("end", () => {
      res.setHeader("x-seen", `${req.method} ${req.url} ${req.headers["x-token"]} ${body}`);
      res.end("pong");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const client = await spawnServer();
  try {
    const port = (server.address() as AddressInfo).port;
    const r = await client.httpRequest({
      method: "POST",
      url: `http://127.0.0.1:${port}/ping`,
      headers: [{ name: "x-token", value: "t1" }],
      body: new TextEncoder().encode("hello"),
      requestId: "q1",
    });
    assert.equal(r.status, 200);
    assert.equal(new TextDecoder().decode(r.body), "pong");
    assert.deepEqual(r.headers.find((h) => h.name === "x-seen")?.value, "POST /ping t1 hello");
    const bad = await client.httpRequest({ method: "GET", url: "ftp://x/", requestId: "q2" })
      .catch((e) => e);
    assert.equal(bad.code, -32602);
    assert.match(bad.message, /only supports http and https URLs, got ftp/);
  } finally {
    await client.close();
    await new Promise((r) => server.close(r));
  }
});
