/**
 * Black-box tests of `--listen ws://`: the real server is started as a child
 * process, its URL read from stderr, and it is driven with Deno's WebSocket
 * client and raw HTTP handshakes.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExecServerClient, ServerError } from "../mod.ts";
import {
  WEBSOCKET_MAX_OUTPUT_BYTES,
  WEBSOCKET_MAX_READ_FILE_BYTES,
} from "../src/transport/serve_websocket.ts";
import {
  b64,
  ENV,
  eventually,
  type Msg,
  nodeServerCommand,
  startParams,
  unb64,
  waitForMessage,
} from "./harness.ts";
import { WsServer } from "./ws_fixture.ts";

const TOKEN = "test-token-0123456789abcdef";
const DIR = mkdtempSync(join(tmpdir(), "exec-server-ws-"));
const TOKEN_FILE = join(DIR, "token");
writeFileSync(TOKEN_FILE, `  ${TOKEN}\n`, { mode: 0o600 });

/** Run a websocket server for the length of `fn`, and check that it stops cleanly. */
async function withWsServer(
  args: string[],
  fn: (s: WsServer) => Promise<void>,
  cmd?: string[],
): Promise<void> {
  const s = await WsServer.start(args, cmd);
  try {
    await fn(s);
  } catch (err) {
    await s.stop();
    throw new Error(`${err instanceof Error ? err.stack : err}\nserver stderr:\n${s.stderr}`);
  }
  const res = await s.stop();
  assert.equal(res.code, 0, `server exit: ${JSON.stringify(res)}\n${s.stderr}`);
}

/** A JSON-RPC client over Deno's WebSocket. */
class WsClient {
  readonly messages: Msg[] = [];
  #nextId = 1;
  #listeners = new Set<() => void>();
  #closed: Promise<void>;

  private constructor(readonly socket: WebSocket) {
    socket.onmessage = (ev) => {
      this.messages.push(JSON.parse(String(ev.data)));
      for (const l of [...this.#listeners]) l();
    };
    this.#closed = new Promise((resolve) => socket.addEventListener("close", () => resolve()));
  }

  /** Open a websocket, sending `headers`; rejects when it does not open. */
  static connect(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
    const socket = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      socket.onopen = () => resolve(new WsClient(socket));
      socket.onerror = (ev) =>
        reject(new Error(`websocket did not open: ${(ev as ErrorEvent).message}`));
    });
  }

  /** Connect with the test token and complete the handshake. */
  static async ready(url: string, token = TOKEN): Promise<WsClient> {
    const c = await WsClient.connect(url, { Authorization: `Bearer ${token}` });
    const init = await c.call("initialize", { clientName: "ws-test" });
    assert.equal(init.protocolVersion, "exec-server.v0");
    c.notify("initialized", {});
    return c;
  }

  send(msg: Msg): void {
    this.socket.send(JSON.stringify(msg));
  }

  notify(method: string, params?: unknown): void {
    this.send({ method, params });
  }

  async request(method: string, params?: unknown): Promise<Msg> {
    const id = this.#nextId++;
    this.send({ id, method, params });
    return await this.waitFor((m) => m.id === id && !("method" in m), `response to ${method}`);
  }

  async call(method: string, params?: unknown): Promise<Msg> {
    const res = await this.request(method, params);
    if (res.error) throw new Error(`${method} failed: ${JSON.stringify(res.error)}`);
    return res.result;
  }

  start(processId: string, argv: string[], extra: Msg = {}): Promise<Msg> {
    return this.call("process/start", startParams(processId, argv, extra));
  }

  outputText(processId: string): string {
    return this.messages
      .filter((m) => m.method === "process/output" && m.params.processId === processId)
      .map((m) => unb64(m.params.chunk)).join("");
  }

  waitFor(pred: (m: Msg) => boolean, what = "message", timeoutMs = 15_000): Promise<Msg> {
    return waitForMessage({
      messages: this.messages,
      listeners: this.#listeners,
      pred,
      timeoutMs,
      timedOut: () => new Error(`timed out waiting for ${what}`),
    });
  }

  async close(): Promise<void> {
    this.socket.close();
    await this.#closed;
  }
}

/** The status line and headers of a raw websocket handshake. */
interface HandshakeReply {
  status: number;
  head: string;
}

/** Send an HTTP upgrade request by hand and read the reply's head. */
function rawHandshake(url: string, headers: Record<string, string> = {}): Promise<HandshakeReply> {
  const u = new URL(url.replace(/^ws:/, "http:"));
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1");
  const lines = [
    `GET ${u.pathname} HTTP/1.1`,
    `Host: ${u.host}`,
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    "",
    "",
  ];
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port: Number(u.port) }, () => sock.write(lines.join("\r\n")));
    let buf = "";
    const finish = () => {
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const head = buf.slice(0, end);
      sock.destroy();
      resolve({ status: Number(head.split(" ")[1]), head });
      return true;
    };
    sock.setEncoding("latin1");
    sock.on("data", (d: string) => {
      buf += d;
      finish();
    });
    sock.on("error", reject);
    sock.on("close", () => {
      if (!finish()) reject(new Error(`connection closed before a reply: ${JSON.stringify(buf)}`));
    });
  });
}

const auth = { Authorization: `Bearer ${TOKEN}` };

/** The PTY echo flow: handshake, cat on a PTY, write, see the echo, terminate. */
async function ptyEchoFlow(url: string): Promise<void> {
  const c = await WsClient.ready(url);
  assert.deepEqual(await c.start("cat", ["cat"], { tty: true }), { processId: "cat" });
  assert.deepEqual(await c.call("process/write", { processId: "cat", chunk: b64("hello\n") }), {
    accepted: true,
  });
  await eventually(() => /hello\r?\n[^]*hello/.test(c.outputText("cat")), 10_000, "echo");
  assert.ok(c.messages.some((m) => m.method === "process/output" && m.params.stream === "pty"));
  assert.deepEqual(await c.call("process/terminate", { processId: "cat" }), { running: true });
  const exited = await c.waitFor(
    (m) => m.method === "process/exited" && m.params.processId === "cat",
    "exited",
  );
  assert.equal(typeof exited.params.exitCode, "number");
  await c.close();
}

Deno.test("websocket: PTY echo flow, token and origin checks", async () => {
  await withWsServer(["--listen", "ws://127.0.0.1:0", "--token-file", TOKEN_FILE], async (s) => {
    assert.match(s.url, /^ws:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(s.generatedToken, undefined);
    await ptyEchoFlow(s.url);

    // Wrong or missing credentials: 401 and no upgrade.
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: "Bearer wrong-token" },
      { Authorization: `Bearer ${TOKEN}x` },
      { Authorization: `Basic ${TOKEN}` },
      { Authorization: TOKEN },
    ];
    for (const headers of attempts) {
      const reply = await rawHandshake(s.url, headers);
      assert.equal(reply.status, 401, `${JSON.stringify(headers)}: ${reply.head}`);
      assert.doesNotMatch(reply.head, /sec-websocket-accept/i);
    }
    await assert.rejects(WsClient.connect(s.url, { Authorization: "Bearer nope" }));
    await assert.rejects(WsClient.connect(s.url));
    // The scheme is case-insensitive, as HTTP says.
    assert.equal((await rawHandshake(s.url, { Authorization: `bearer ${TOKEN}` })).status, 101);

    // A browser origin is refused even with the right token.
    const evil = await rawHandshake(s.url, { ...auth, Origin: "https://evil.example" });
    assert.equal(evil.status, 403);
    await assert.rejects(WsClient.connect(s.url, { ...auth, Origin: "https://evil.example" }));
    assert.match(s.stderr, /refused websocket .*origin "https:\/\/evil\.example"/);
  });
});

Deno.test("websocket: --allow-origin admits the named origin only", async () => {
  await withWsServer([
    "--listen",
    "ws://127.0.0.1:0",
    "--token-file",
    TOKEN_FILE,
    "--allow-origin",
    "https://app.example",
    "--allow-origin",
    "http://localhost:5173",
  ], async (s) => {
    const ok = (origin: string) => rawHandshake(s.url, { ...auth, Origin: origin });
    assert.equal((await ok("https://app.example")).status, 101);
    assert.equal((await ok("HTTPS://APP.example:443")).status, 101);
    assert.equal((await ok("http://localhost:5173")).status, 101);
    assert.equal((await ok("https://app.example.evil")).status, 403);
    assert.equal((await ok("http://app.example")).status, 403);
    assert.equal((await ok("null")).status, 403);
    // An allowed origin still needs the token.
    assert.equal((await rawHandshake(s.url, { Origin: "https://app.example" })).status, 401);
    const c = await WsClient.connect(s.url, { ...auth, Origin: "https://app.example" });
    await c.call("initialize", { clientName: "browser" });
    await c.close();
  });
});

Deno.test("websocket: a closed connection's processes die, another's live on", async () => {
  const marker = join(DIR, "marker");
  rmSync(marker, { force: true });
  await withWsServer(["--listen", "ws://127.0.0.1:0", "--token-file", TOKEN_FILE], async (s) => {
    const a = await WsClient.ready(s.url);
    const b = await WsClient.ready(s.url);
    await b.start("cat", ["cat"], { pipeStdin: true });
    await a.start("late", ["sh", "-c", `sleep 1; echo x > ${marker}`]);
    await a.close();
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(existsSync(marker), false, "the closed connection's process kept running");

    await b.call("process/write", { processId: "cat", chunk: b64("ping\n") });
    await eventually(() => b.outputText("cat") === "ping\n", 10_000, "cat's echo");
    const read = await b.call("process/read", { processId: "cat" });
    assert.equal(read.exited, false);
    assert.equal(unb64(read.chunks[0].chunk), "ping\n");
    await b.close();
  });
});

Deno.test("websocket: readyz, 404s, oversized and binary frames", async () => {
  await withWsServer([
    "--listen",
    "ws://127.0.0.1:0",
    "--token-file",
    TOKEN_FILE,
    "--max-message-bytes",
    "1024",
  ], async (s) => {
    const http = s.url.replace(/^ws:/, "http:");
    const ready = await fetch(`${http}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(await ready.text(), "ok");
    for (const path of ["/", "/readyz/", "/metrics", "/.env"]) {
      const res = await fetch(`${http}${path}`, { headers: auth });
      assert.equal(res.status, 404, path);
      assert.equal(await res.text(), "not found\n");
    }
    const post = await fetch(`${http}/readyz`, { method: "POST" });
    assert.equal(post.status, 404);
    await post.body?.cancel();
    assert.equal((await rawHandshake(`${s.url}/other`, auth)).status, 404);

    const c = await WsClient.connect(s.url, auth);
    c.send({ id: 1, method: "initialize", params: { clientName: "x".repeat(2000) } });
    const tooLarge = await c.waitFor((m) => "error" in m, "the too-large error");
    assert.equal(tooLarge.id, null);
    assert.equal(tooLarge.error.code, -32600);
    assert.match(tooLarge.error.message, /too large/);

    // Binary frames holding UTF-8 JSON are messages too; others are parse errors.
    c.socket.send(new TextEncoder().encode(JSON.stringify({
      id: 2,
      method: "initialize",
      params: { clientName: "binary" },
    })));
    const init = await c.waitFor((m) => m.id === 2, "binary initialize");
    assert.equal(init.result.protocolVersion, "exec-server.v0");
    c.socket.send(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
    const bad = await c.waitFor((m) => m.error?.code === -32700, "the UTF-8 error");
    assert.equal(bad.id, null);
    c.notify("initialized");
    const res = await c.start("echo", ["echo", "still here"]);
    assert.deepEqual(res, { processId: "echo" });
    await c.waitFor((m) => m.method === "process/exited", "exit");
    assert.equal(c.outputText("echo"), "still here\n");
    await c.close();
  });
});

Deno.test("websocket: --max-connections refuses extra upgrades with 503", async () => {
  await withWsServer([
    "--listen",
    "ws://127.0.0.1:0",
    "--token-file",
    TOKEN_FILE,
    "--max-connections",
    "1",
  ], async (s) => {
    const first = await WsClient.ready(s.url);
    const refused = await rawHandshake(s.url, auth);
    assert.equal(refused.status, 503);
    // Credentials are checked before capacity, so strangers learn nothing.
    assert.equal((await rawHandshake(s.url)).status, 401);
    await first.close();
    let status = 0;
    await eventually(
      async () => {
        status = (await rawHandshake(s.url, auth)).status;
        return status === 101;
      },
      10_000,
      "a free connection slot",
    );
    assert.equal(status, 101);
  });
});

Deno.test("websocket: a generated token is printed to stderr and required", async () => {
  await withWsServer(["--listen", "ws://127.0.0.1:0"], async (s) => {
    const token = s.generatedToken;
    assert.match(token ?? "", /^[0-9a-f]{64}$/);
    assert.ok(s.stderr.indexOf("auth token:") < s.stderr.indexOf("listening on"));
    assert.equal((await rawHandshake(s.url)).status, 401);
    const c = await WsClient.ready(s.url, token);
    await c.close();
  });
});

Deno.test("websocket: --no-auth warns and admits clients without a token", async () => {
  await withWsServer(["--listen", "ws://127.0.0.1:0", "--no-auth"], async (s) => {
    assert.match(s.stderr, /WARNING: --no-auth/);
    assert.equal(s.generatedToken, undefined);
    const c = await WsClient.connect(s.url);
    const init = await c.call("initialize", { clientName: "anyone" });
    assert.equal(init.protocolVersion, "exec-server.v0");
    await c.close();
    // Origins are still checked.
    assert.equal((await rawHandshake(s.url, { Origin: "https://evil.example" })).status, 403);
  });
});

Deno.test("websocket: unsafe or contradictory settings are refused at startup", async () => {
  const cases: [string[], RegExp][] = [
    [["--listen", "ws://0.0.0.0:0"], /refusing to listen on 0\.0\.0\.0/],
    [["--listen", "ws://[::]:0"], /refusing to listen on ::/],
    [["--listen", "ws://127.0.0.1:0", "--no-auth", "--token-file", TOKEN_FILE], /exclude/],
    [["--listen", "ws://127.0.0.1:0", "--token-file", join(DIR, "missing")], /cannot read token/],
    [["--listen", "ws://127.0.0.1:0", "--allow-origin", "not an origin"], /not an origin/],
  ];
  const empty = join(DIR, "empty-token");
  writeFileSync(empty, "\n", { mode: 0o600 });
  cases.push([["--listen", "ws://127.0.0.1:0", "--token-file", empty], /is empty/]);
  for (const [args, message] of cases) {
    const s = new WsServer(args);
    const res = await s.exited;
    assert.equal(res.code, 2, `${args.join(" ")}: ${s.stderr}`);
    assert.match(s.stderr, message);
    assert.doesNotMatch(s.stderr, /listening on/);
  }
});

Deno.test("websocket: a non-loopback bind works with a token file", async () => {
  await withWsServer(["--listen", "ws://0.0.0.0:0", "--token-file", TOKEN_FILE], async (s) => {
    assert.match(s.stderr, /WARNING: ws:\/\/ is not encrypted/);
    const port = new URL(s.url).port;
    const c = await WsClient.ready(`ws://127.0.0.1:${port}`);
    await c.close();
  });
});

Deno.test("websocket: hostnames and IPv6 loopback", async () => {
  await withWsServer(["--listen", "ws://localhost:0", "--token-file", TOKEN_FILE], async (s) => {
    assert.match(s.url, /^ws:\/\/(127\.0\.0\.1|\[::1\]):\d+$/);
    const c = await WsClient.ready(s.url);
    await c.close();
    const viaName = await WsClient.ready(`ws://localhost:${new URL(s.url).port}`);
    await viaName.close();
  });
  await withWsServer(["--listen", "ws://[::1]:0", "--token-file", TOKEN_FILE], async (s) => {
    assert.match(s.url, /^ws:\/\/\[::1\]:\d+$/);
    const c = await WsClient.ready(s.url);
    const res = await c.start("echo", ["echo", "v6"]);
    assert.deepEqual(res, { processId: "echo" });
    await c.waitFor((m) => m.method === "process/exited", "exit");
    assert.equal(c.outputText("echo"), "v6\n");
    await c.close();
  });
});

Deno.test("websocket: SIGTERM stops the listener and the processes politely", async () => {
  const marker = join(DIR, "term-marker");
  rmSync(marker, { force: true });
  const s = await WsServer.start(["--listen", "ws://127.0.0.1:0", "--token-file", TOKEN_FILE]);
  const c = await WsClient.ready(s.url);
  await c.start("trap", [
    "sh",
    "-c",
    `trap 'echo term > ${marker}; exit 0' TERM; echo ready; while :; do sleep 0.05; done`,
  ]);
  await eventually(() => c.outputText("trap") === "ready\n", 10_000, "the trap to be set");
  const res = await s.stop();
  assert.equal(res.code, 0, s.stderr);
  assert.equal(existsSync(marker), true, "the process did not get SIGTERM first");
  // The exit happened during shutdown and still reached the client.
  const exited = await c.waitFor((m) => m.method === "process/exited", "exit");
  assert.equal(exited.params.exitCode, 0);
  await assert.rejects(fetch(`${s.url.replace(/^ws:/, "http:")}/readyz`));
  await c.close();
});

Deno.test("websocket: the same flow with the server running under Node", async () => {
  // The test task builds npm/ first; rebuilding here would race with the
  // other tests that run the Node build in parallel.
  const node = nodeServerCommand();
  await withWsServer(
    ["--listen", "ws://127.0.0.1:0", "--token-file", TOKEN_FILE, "--max-message-bytes", "1024"],
    async (s) => {
      await ptyEchoFlow(s.url);
      assert.equal((await rawHandshake(s.url)).status, 401);
      assert.equal(
        (await rawHandshake(s.url, { ...auth, Origin: "https://x.example" })).status,
        403,
      );
      const ready = await fetch(`${s.url.replace(/^ws:/, "http:")}/readyz`);
      assert.equal(await ready.text(), "ok");

      const c = await WsClient.ready(s.url);
      c.send({ id: 99, method: "fs/readFile", params: { path: "/" + "x".repeat(2000) } });
      const tooLarge = await c.waitFor((m) => "error" in m, "the too-large error");
      assert.equal(tooLarge.id, null);
      assert.equal(tooLarge.error.code, -32600);
      const marker = join(DIR, "node-marker");
      await c.start("late", ["sh", "-c", `sleep 1; echo x > ${marker}`]);
      await c.close();
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(existsSync(marker), false);
    },
    node,
  );
});

Deno.test("websocket: fs/readFile is capped so every response fits in a 64 MiB message", async () => {
  // Deno's WebSocket drops the connection on a message over 64 MiB; a
  // 50 MiB file is 67 MiB of base64.
  const MiB = 1024 * 1024;
  const big = join(DIR, "big-50m.bin");
  const fits = join(DIR, "fits-40m.bin");
  writeFileSync(big, new Uint8Array(50 * MiB).fill(0x41));
  writeFileSync(fits, new Uint8Array(40 * MiB).fill(0x42));
  try {
    // Under Deno and under Node: the cap is the server's, whatever its runtime.
    for (const cmd of [undefined, nodeServerCommand()]) {
      await withWsServer(
        ["--listen", "ws://127.0.0.1:0", "--token-file", TOKEN_FILE, "--max-output-bytes", "100M"],
        async (s) => {
          const client = await ExecServerClient.connectWebSocket(s.url, { token: TOKEN });
          try {
            const p = await client.spawn({
              argv: ["sh", "-c", "read line; echo got:$line"],
              env: ENV,
              pipeStdin: true,
            });
            const err = await client.fsReadFile(big).then(
              () => assert.fail("a 50 MiB read should be refused"),
              (e: unknown) => e,
            );
            assert.ok(err instanceof ServerError, `expected a ServerError, got ${err}`);
            assert.equal(err.errno, "EFBIG", err.message);
            assert.equal(err.code, -32600);
            assert.match(err.message, new RegExp(`read limit of ${WEBSOCKET_MAX_READ_FILE_BYTES}`));
            assert.equal(client.isClosed, false);
            const data = await client.fsReadFile(fits);
            assert.equal(data.byteLength, 40 * MiB);
            assert.ok(data.every((b) => b === 0x42));
            // The process lived through both.
            await p.write("still here\n");
            const result = await p.collect();
            assert.equal(result.stdout, "got:still here\n");
            assert.equal(result.exitCode, 0);

            const limits = client.capabilities.limits as Record<string, number>;
            assert.equal(limits.maxReadFileBytes, WEBSOCKET_MAX_READ_FILE_BYTES);
            assert.equal(WEBSOCKET_MAX_READ_FILE_BYTES, 50_328_576);
            // Base64 of the largest file, with room for the JSON around it.
            assert.ok(Math.ceil(WEBSOCKET_MAX_READ_FILE_BYTES / 3) * 4 + 4096 <= 64 * MiB);
            // --max-output-bytes above the cap is lowered too, with a warning.
            assert.equal(limits.maxOutputBytes, WEBSOCKET_MAX_OUTPUT_BYTES);
            assert.match(s.stderr, /--max-output-bytes 104857600 is lowered to 33554432/);
          } finally {
            await client.close();
          }
        },
        cmd,
      );
    }
    // A lower limit given by the user wins, and draws no warning.
    await withWsServer(
      ["--listen", "ws://127.0.0.1:0", "--token-file", TOKEN_FILE, "--max-read-file-bytes", "1000"],
      async (s) => {
        const client = await ExecServerClient.connectWebSocket(s.url, { token: TOKEN });
        try {
          const limits = client.capabilities.limits as Record<string, number>;
          assert.equal(limits.maxReadFileBytes, 1000);
          assert.equal(limits.maxOutputBytes, 1024 * 1024);
          const err = await client.fsReadFile(fits).catch((e: unknown) => e);
          assert.ok(err instanceof ServerError && err.errno === "EFBIG", String(err));
          assert.match(err.message, /read limit of 1000 bytes/);
          assert.doesNotMatch(s.stderr, /lowered/);
        } finally {
          await client.close();
        }
      },
    );
  } finally {
    rmSync(big, { force: true });
    rmSync(fits, { force: true });
  }
});

globalThis.addEventListener("unload", () => rmSync(DIR, { recursive: true, force: true }));
