/**
 * The client library against the real server (stdio child, websocket,
 * in process) and against a scripted fake server driven frame by frame.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  ConnectError,
  connectInProcess,
  ConnectionClosedError,
  ConnectTimeoutError,
  createConnectionPair,
  Environment,
  ExecServerClient,
  type ExecServerClient as Client,
  FileSystemError,
  type FrameConnection,
  InitializeTimeoutError,
  ProcessError,
  ServerError,
  type ServerNotification,
  SpawnError,
} from "../mod.ts";
import { eventually, type Msg, pidsByArgv0, ROOT, serverCommand } from "./harness.ts";
import { WsServer } from "./ws_fixture.ts";

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** A client of the real server over stdio (the build under test). */
function spawnServer(args: string[] = []): Promise<Client> {
  const [cmd, ...rest] = serverCommand();
  return ExecServerClient.spawnStdio(cmd, [...rest, ...args], { cwd: ROOT });
}

// -- a scripted fake server ------------------------------------------------

/** The server end of an in-memory pair, driven by hand. */
class FakeServer {
  readonly conn: FrameConnection;
  #frames: AsyncIterator<{ kind: string; text?: string }>;

  constructor(conn: FrameConnection) {
    this.conn = conn;
    this.#frames = conn.frames()[Symbol.asyncIterator]() as AsyncIterator<
      { kind: string; text?: string }
    >;
  }

  /** The next message the client sent, or null when it closed its end. */
  async next(): Promise<Msg | null> {
    const r = await this.#frames.next();
    if (r.done) return null;
    return JSON.parse(r.value.text!);
  }

  send(msg: Msg): void {
    this.conn.send(JSON.stringify(msg));
  }

  /** Answer initialize and swallow initialized. */
  async handshake(): Promise<void> {
    const init = await this.next();
    assert.equal(init?.method, "initialize");
    this.send({ id: init!.id, result: { protocolVersion: "exec-server.v0" } });
    assert.equal((await this.next())?.method, "initialized");
  }
}

/** A client connected to a fake server, with the handshake done. */
async function fakePair(
  opts: Parameters<typeof ExecServerClient.connect>[1] = {},
): Promise<{ client: Client; server: FakeServer }> {
  const [clientEnd, serverEnd] = createConnectionPair();
  const server = new FakeServer(serverEnd);
  const [client] = await Promise.all([
    // The fake never hangs up by itself; do not wait long for it on close.
    ExecServerClient.connect(clientEnd, { closeTimeoutMs: 50, ...opts }),
    server.handshake(),
  ]);
  return { client, server };
}

Deno.test("fake server: responses matched by id when answered out of order", async () => {
  const { client, server } = await fakePair();
  const first = client.fsGetMetadata("/a");
  const second = client.fsReadFile("/b");
  const m1 = await server.next();
  const m2 = await server.next();
  assert.equal(m1?.method, "fs/getMetadata");
  assert.deepEqual(m2?.params, { path: "/b" });
  server.send({ id: m2!.id, result: { dataBase64: "aGk=" } });
  server.send({
    id: m1!.id,
    result: { isDirectory: true, isFile: false, createdAtMs: 1, modifiedAtMs: 2 },
  });
  assert.deepEqual(decode(await second), "hi");
  assert.deepEqual(await first, {
    isDirectory: true,
    isFile: false,
    createdAtMs: 1,
    modifiedAtMs: 2,
  });
  await client.close();
});

Deno.test("fake server: an error answer becomes a ServerError with code, data and errno", async () => {
  const { client, server } = await fakePair();
  const call = client.fsReadFile("/secret");
  const m = await server.next();
  server.send({
    id: m!.id,
    error: {
      code: -32603,
      message: "readFile /secret: permission denied",
      data: { errno: "EACCES", extra: 7 },
    },
  });
  const err = await call.then(() => assert.fail("should reject"), (e) => e);
  assert.ok(err instanceof ServerError);
  assert.equal(err.code, -32603);
  assert.equal(err.method, "fs/readFile");
  assert.equal(err.errno, "EACCES");
  assert.deepEqual(err.data, { errno: "EACCES", extra: 7 });
  assert.equal(err.serverMessage, "readFile /secret: permission denied");
  assert.match(
    err.message,
    /fs\/readFile failed: readFile \/secret: permission denied \(code -32603\)/,
  );
  // The filesystem view turns the same answer into a FileSystemError.
  const viaFs = client.fs.readFile("/secret");
  const m2 = await server.next();
  server.send({ id: m2!.id, error: { code: -32603, message: "nope", data: { errno: "EACCES" } } });
  await assert.rejects(viaFs, { name: "FileSystemError", errno: "EACCES", kind: "io" });
  await client.close();
});

Deno.test("fake server: initialize that is never answered times out", async () => {
  const [clientEnd, serverEnd] = createConnectionPair();
  const server = new FakeServer(serverEnd);
  const connecting = ExecServerClient.connect(clientEnd, {
    initializeTimeoutMs: 150,
    closeTimeoutMs: 200,
  });
  assert.equal((await server.next())?.method, "initialize");
  const err = await connecting.then(() => assert.fail("should reject"), (e) => e);
  assert.ok(err instanceof InitializeTimeoutError, String(err));
  assert.equal(err.timeoutMs, 150);
  // The client hung up: the fake sees the end of its frames.
  assert.equal(await server.next(), null);
});

Deno.test("fake server: pending calls reject when the connection drops, later calls at once", async () => {
  const { client, server } = await fakePair();
  const pending = [client.fsReadFile("/x"), client.processRead("p1", { waitMs: 1000 })];
  await server.next();
  await server.next();
  await server.conn.close();
  for (const call of pending) {
    const err = await call.then(() => assert.fail("should reject"), (e) => e);
    assert.ok(err instanceof ConnectionClosedError, String(err));
    assert.match(err.reason, /closed the connection/);
  }
  const info = await client.closed;
  assert.equal(info.byClient, false);
  assert.ok(client.isClosed);
  // Rejected without being sent: the fake's inbox stays empty and ended.
  await assert.rejects(client.fsGetMetadata("/y"), ConnectionClosedError);
  await assert.rejects(client.spawn({ argv: ["true"] }), ConnectionClosedError);
  assert.equal(await server.next(), null);
});

Deno.test("fake server: a spawned handle fails with the connection, keeping buffered output", async () => {
  const { client, server } = await fakePair();
  const spawning = client.spawn({ argv: ["sleep", "100"] });
  const start = await server.next();
  assert.equal(start?.method, "process/start");
  assert.deepEqual(start?.params.env, { PATH: "/usr/local/bin:/usr/bin:/bin" });
  assert.equal(start?.params.cwd, "/");
  const id = start!.params.processId;
  server.send({ id: start!.id, result: { processId: id } });
  server.send({
    method: "process/output",
    params: { processId: id, stream: "stdout", chunk: "aGk=", seq: 1 },
  });
  const p = await spawning;
  await server.conn.close();
  await assert.rejects(p.wait(), ConnectionClosedError);
  const reader = p.output.getReader();
  const first = await reader.read();
  assert.equal(decode(first.value!.data), "hi");
  await assert.rejects(reader.read(), ConnectionClosedError);
  await client.closed;
});

Deno.test("fake server: output sent before the start response reaches the handle", async () => {
  const { client, server } = await fakePair();
  const spawning = client.spawn({ argv: ["echo", "x"], cwd: "/tmp", env: { A: "1" } });
  const start = await server.next();
  assert.deepEqual(start?.params, {
    processId: start!.params.processId,
    argv: ["echo", "x"],
    cwd: "/tmp",
    env: { A: "1" },
    tty: false,
  });
  const id = start!.params.processId;
  // A server that does not hold output back until its response is sent.
  server.send({
    method: "process/output",
    params: { processId: id, stream: "stdout", chunk: "eA==" },
  });
  server.send({
    method: "process/output",
    params: { processId: id, stream: "stderr", chunk: "eQ==" },
  });
  server.send({ method: "process/exited", params: { processId: id, exitCode: 0 } });
  server.send({ id: start!.id, result: { processId: id } });
  const p = await spawning;
  const r = await p.collect();
  assert.equal(r.stdout, "x");
  assert.equal(r.stderr, "y");
  assert.equal(r.exitCode, 0);
  assert.equal(r.signal, null);
  await client.close();
});

Deno.test("fake server: malformed notifications are reported, not fatal", async () => {
  const problems: string[] = [];
  const { client, server } = await fakePair({ onProblem: (m) => problems.push(m) });
  server.send({
    method: "process/output",
    params: { processId: "p", stream: "stdout", chunk: "!!" },
  });
  server.send({ method: "process/exited", params: { processId: "p" } });
  server.send({ id: 999, result: {} });
  const call = client.fsRemove("/z");
  const m = await server.next();
  server.send({ id: m!.id, result: {} });
  await call;
  assert.equal(problems.length, 3, problems.join("\n"));
  await client.close();
});

Deno.test("fake server: spawn errors become SpawnError with errno", async () => {
  const { client, server } = await fakePair();
  const spawning = client.spawn({ argv: ["nope"] });
  const start = await server.next();
  server.send({
    id: start!.id,
    error: { code: -32603, message: "cannot start nope: ENOENT", data: { errno: "ENOENT" } },
  });
  const err = await spawning.then(() => assert.fail("should reject"), (e) => e);
  assert.ok(err instanceof SpawnError);
  assert.equal(err.errno, "ENOENT");
  assert.ok(err.cause instanceof ServerError);
  await client.close();
});

Deno.test("fake server: invalid spawn options fail before anything is sent", async () => {
  const { client, server } = await fakePair();
  await assert.rejects(client.spawn({ argv: [] }), TypeError);
  await assert.rejects(client.spawn({ argv: ["ls"], cwd: "tmp" }), /cwd must be an absolute path/);
  await assert.rejects(client.spawn({ argv: ["ls"], env: { "A=B": "1" } }), TypeError);
  await client.close();
  assert.equal(await server.next(), null);
});

// -- the real server over stdio ----------------------------------------------

Deno.test("stdio: handshake info, run, typed fs calls, close", async () => {
  const client = await spawnServer();
  assert.equal(client.protocolVersion, "exec-server.v0");
  assert.equal(client.serverInfo?.name, "exec-server");
  assert.ok(Array.isArray(client.capabilities.methods));
  const r = await client.run(["sh", "-c", "echo out; echo err >&2; exit 3"]);
  assert.equal(r.exitCode, 3);
  assert.equal(r.stdout, "out\n");
  assert.equal(r.stderr, "err\n");
  const dir = mkdtempSync(join(tmpdir(), "client-test-"));
  try {
    const bytes = new Uint8Array(256).map((_, i) => i);
    await client.fsWriteFile(`${dir}/f.bin`, bytes);
    assert.deepEqual(await client.fsReadFile(`${dir}/f.bin`), bytes);
    const err = await client.fsReadFile(`${dir}/missing`).then(
      () => assert.fail("should reject"),
      (e) => e,
    );
    assert.ok(err instanceof ServerError);
    assert.equal(err.code, -32603);
    assert.equal(err.errno, "ENOENT");
    const rel = await client.fsReadFile("relative").then(() => assert.fail(""), (e) => e);
    assert.ok(rel instanceof ServerError);
    assert.equal(rel.code, -32602);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await client.close();
  const info = await client.closed;
  assert.deepEqual(info, { reason: "closed by the client", byClient: true });
  await assert.rejects(client.run(["true"]), ConnectionClosedError);
});

Deno.test("stdio: stdin, signals, resize, terminate through the handle", async () => {
  const client = await spawnServer();
  const cat = await client.spawn({ argv: ["cat"], pipeStdin: true });
  await cat.write("hello ");
  await cat.write(new TextEncoder().encode("world"));
  await cat.closeStdin();
  const r = await cat.collect();
  assert.equal(r.stdout, "hello world");
  await assert.rejects(cat.write("late"), ProcessError);

  const sleeper = await client.spawn({ argv: ["sleep", "30"] });
  await assert.rejects(sleeper.resize({ rows: 10, cols: 10 }), /no terminal/);
  await assert.rejects(sleeper.signal("SIGNOPE"), ProcessError);
  await sleeper.signal("SIGTERM");
  assert.deepEqual(
    { code: (await sleeper.wait()).exitCode, signal: sleeper.exit?.signal },
    { code: 143, signal: "SIGTERM" },
  );
  const again = await client.spawn({ argv: ["sleep", "30"] });
  assert.equal(await again.terminate(), true);
  assert.equal((await again.wait()).exitCode, 137);
  assert.equal(await again.terminate(), false);

  const tty = await client.spawn({
    argv: ["sh", "-c", "stty size; test -t 0 && echo is-a-tty"],
    tty: true,
    size: { rows: 33, cols: 77 },
  });
  const t = await tty.collect();
  assert.match(t.stdout, /33 77/);
  assert.match(t.stdout, /is-a-tty/);
  assert.equal(t.stderr, "");
  await client.close();
});

Deno.test("stdio: events, the notification iterator, and process/read", async () => {
  const client = await spawnServer();
  const outputs: string[] = [];
  const exits: number[] = [];
  const offOutput = client.onOutput((e) => outputs.push(`${e.processId}:${decode(e.data)}`));
  const offExited = client.onExited((e) => exits.push(e.exitCode));
  const seen: ServerNotification[] = [];
  const iterating = (async () => {
    for await (const n of client.notifications()) {
      seen.push(n);
      if (n.kind === "exited") break;
    }
  })();
  const p = await client.spawn({ argv: ["sh", "-c", "printf abc; exit 4"], processId: "mine" });
  assert.equal(p.id, "mine");
  assert.equal((await p.wait()).exitCode, 4);
  await iterating;
  assert.deepEqual(outputs, ["mine:abc"]);
  assert.deepEqual(exits, [4]);
  assert.deepEqual(seen.map((n) => n.kind), ["output", "exited"]);
  const read = await client.processRead("mine");
  assert.equal(read.exited, true);
  assert.equal(read.exitCode, 4);
  assert.equal(decode(read.chunks[0].data), "abc");
  offOutput();
  offExited();
  await client.run(["echo", "unseen"]);
  assert.equal(outputs.length, 1);
  assert.equal(exits.length, 1);
  await assert.rejects(client.spawn({ argv: ["true"], processId: "mine" }), SpawnError);
  await client.close();
});

Deno.test("stdio: a missing program is a SpawnError with errno; a missing cwd too", async () => {
  const client = await spawnServer();
  const err = await client.spawn({ argv: ["/nonexistent/prog"] }).then(
    () => assert.fail("should reject"),
    (e) => e,
  );
  assert.ok(err instanceof SpawnError);
  assert.equal(err.errno, "ENOENT");
  await assert.rejects(client.spawn({ argv: ["ls"], cwd: "/nonexistent-dir" }), {
    name: "SpawnError",
    errno: "ENOENT",
  });
  await client.close();
});

Deno.test("stdio: a server that dies during the handshake is reported with its stderr", async () => {
  const err = await ExecServerClient.spawnStdio("sh", ["-c", "echo boom >&2; exit 7"]).then(
    () => assert.fail("should reject"),
    (e) => e,
  );
  assert.ok(err instanceof ConnectionClosedError, String(err));
  assert.match(err.reason, /exited with code 7/);
  assert.match(err.reason, /boom/);
});

Deno.test("stdio: a program that cannot start is a ConnectError", async () => {
  await assert.rejects(
    ExecServerClient.spawnStdio("/nonexistent/exec-server"),
    (e: unknown) => e instanceof ConnectError && /ENOENT/.test(e.message),
  );
});

Deno.test("stdio: a silent child times out the handshake and is killed", async () => {
  const marker = `silent-${crypto.randomUUID()}`;
  // `exec -a` names the sleeping child after the marker; it ignores stdin EOF,
  // so only a kill ends it.
  const connecting = ExecServerClient.spawnStdio("bash", ["-c", `exec -a ${marker} sleep 60`], {
    initializeTimeoutMs: 300,
    closeTimeoutMs: 100,
  }).then(() => assert.fail("should reject"), (e) => e);
  await eventually(async () => await findByMarker(marker) !== undefined, 5000, "the child");
  const err = await connecting;
  assert.ok(err instanceof InitializeTimeoutError, String(err));
  assert.equal(err.timeoutMs, 300);
  // The client owns the child: it is gone once connect has failed.
  assert.equal(await findByMarker(marker), undefined);
});

Deno.test("stdio: the server dying ends the client, its calls and its handles", async () => {
  const client = await spawnServer();
  const marker = `orphan-${crypto.randomUUID()}`;
  const sleeper = await client.spawn({ argv: ["sleep", "30"], arg0: marker });
  const pending = client.processRead(sleeper.id, { waitMs: 10_000 }).then(
    () => "resolved",
    (e) => e,
  );
  // A sibling kills the server (its parent) outright, maybe before the
  // server has answered this very start.
  await client.spawn({ argv: ["sh", "-c", 'kill -9 "$PPID"'] }).catch(() => {});
  const info = await client.closed;
  assert.equal(info.byClient, false);
  assert.match(info.reason, /killed by SIGKILL/);
  assert.ok(await pending instanceof ConnectionClosedError);
  await assert.rejects(sleeper.wait(), ConnectionClosedError);
  await assert.rejects(client.fsGetMetadata("/"), ConnectionClosedError);
  // A SIGKILLed server cannot clean up: remove its orphan ourselves.
  const orphan = await findByMarker(marker);
  if (orphan !== undefined) process.kill(orphan, "SIGKILL");
});

// -- in process ---------------------------------------------------------------

Deno.test("in-process: same semantics without a transport", async () => {
  const client = await connectInProcess({ exitDrainMs: 50 });
  assert.equal(client.protocolVersion, "exec-server.v0");
  const r = await client.run(["sh", "-c", "cat; echo done >&2"], { stdin: "fed" });
  assert.equal(r.stdout, "fed");
  assert.equal(r.stderr, "done\n");
  const t = await client.run(["sleep", "30"], { timeoutMs: 100 });
  assert.equal(t.timedOut, true);
  assert.equal(t.exitCode, 137);
  const running = await client.spawn({ argv: ["sleep", "30"] });
  await client.close();
  await assert.rejects(running.wait(), ConnectionClosedError);
});

// -- no output lost --------------------------------------------------------------

async function fastProcessesKeepEveryByte(client: Client, runs: number): Promise<void> {
  for (let i = 0; i < runs; i++) {
    const p = await client.spawn({ argv: ["head", "-c", "65536", "/dev/zero"] });
    // Read only after the exit: everything must have been buffered.
    const exit = await p.wait();
    assert.equal(exit.exitCode, 0);
    let bytes = 0;
    let zeros = true;
    let lastSeq = 0;
    const reader = p.output.getReader();
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      assert.equal(value.stream, "stdout");
      assert.ok(value.seq > lastSeq, "seq increases");
      lastSeq = value.seq;
      bytes += value.data.byteLength;
      zeros &&= value.data.every((b) => b === 0);
    }
    assert.equal(bytes, 65536, `run ${i}`);
    assert.ok(zeros);
  }
}

Deno.test("no loss: 50 fast processes over stdio, exact byte counts", async () => {
  const client = await spawnServer();
  await fastProcessesKeepEveryByte(client, 50);
  await client.close();
});

Deno.test("no loss: 50 fast processes in process, exact byte counts", async () => {
  const client = await connectInProcess();
  await fastProcessesKeepEveryByte(client, 50);
  await client.close();
});

Deno.test("no loss: concurrent fast processes with collect()", async () => {
  const client = await connectInProcess();
  const results = await Promise.all(
    Array.from({ length: 20 }, () => client.run(["head", "-c", "100000", "/dev/urandom"])),
  );
  for (const r of results) {
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdoutBytes.byteLength, 100000);
  }
  await client.close();
});

// -- websocket ---------------------------------------------------------------------

Deno.test("websocket: token auth, run, fs, and typed connect errors", async () => {
  const dir = mkdtempSync(join(tmpdir(), "client-ws-"));
  const tokenFile = join(dir, "token");
  writeFileSync(tokenFile, "s3cret-token-for-the-client-test\n", { mode: 0o600 });
  const server = await WsServer.start(["--listen", "ws://127.0.0.1:0", "--token-file", tokenFile]);
  try {
    const client = await ExecServerClient.connectWebSocket(server.url, {
      token: "s3cret-token-for-the-client-test",
    });
    assert.equal(client.protocolVersion, "exec-server.v0");
    const r = await client.run(["sh", "-c", "echo via-ws; exit 2"]);
    assert.equal(r.stdout, "via-ws\n");
    assert.equal(r.exitCode, 2);
    await client.fs.writeFile(`${dir}/w.txt`, new TextEncoder().encode("ws"));
    assert.equal(decode(await client.fs.readFile(`${dir}/w.txt`)), "ws");
    await fastProcessesKeepEveryByte(client, 5);
    await client.close();
    assert.equal((await client.closed).byClient, true);

    await assert.rejects(
      ExecServerClient.connectWebSocket(server.url, { token: "wrong" }),
      ConnectError,
    );
    await assert.rejects(ExecServerClient.connectWebSocket(server.url), ConnectError);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("websocket: a listener that never answers the upgrade times out", async () => {
  const { createServer } = await import("node:net");
  const sockets: import("node:net").Socket[] = [];
  const silent = createServer((s) => sockets.push(s));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const port = (silent.address() as { port: number }).port;
  try {
    const err = await ExecServerClient.connectWebSocket(`ws://127.0.0.1:${port}`, {
      connectTimeoutMs: 200,
    }).then(() => assert.fail("should reject"), (e) => e);
    assert.ok(err instanceof ConnectTimeoutError, String(err));
    assert.equal(err.timeoutMs, 200);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
  await assert.rejects(ExecServerClient.connectWebSocket("http://x"), TypeError);
});

// -- helpers -------------------------------------------------------------------------

/** The pid of a live process whose argv[0] is `marker`. */
async function findByMarker(marker: string): Promise<number | undefined> {
  return (await pidsByArgv0(marker))[0];
}

Deno.test("client: stdin larger than the server's message limit goes in pieces, in order", async () => {
  const client = await spawnServer(["--max-message-bytes", "64K"]);
  try {
    const input = new Uint8Array(1_000_000);
    for (let i = 0; i < input.length; i++) input[i] = (i * 7) % 251;
    const r = await client.run(["sha256sum"], { stdin: input });
    const expected = createHash("sha256").update(input).digest("hex");
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout.split(" ")[0], expected);
  } finally {
    await client.close();
  }
});

Deno.test("client: a file over the server's message limit is refused before sending, catchably", async () => {
  const client = await spawnServer(["--max-message-bytes", "64K"]);
  try {
    const dir = await Deno.makeTempDir();
    const err = await client.fsWriteFile(`${dir}/big`, new Uint8Array(100_000)).then(
      () => undefined,
      (e) => e,
    );
    assert.ok(err instanceof ServerError, String(err));
    assert.equal(err.code, -32600);
    assert.equal(err.errno, "EFBIG");
    // The connection is fine; a small file goes through.
    await client.fsWriteFile(`${dir}/small`, new Uint8Array(1000));
    assert.equal((await Deno.stat(`${dir}/small`)).size, 1000);
    // Through the FileSystem interface it is a FileSystemError like any other.
    await assert.rejects(
      Environment.remote(client).fs.writeFile(`${dir}/big`, new Uint8Array(100_000)),
      (e: unknown) => e instanceof FileSystemError && e.errno === "EFBIG",
    );
    await Deno.remove(dir, { recursive: true });
  } finally {
    await client.close();
  }
});

Deno.test("client: an exited process's handle never acts on a later process with its id", async () => {
  const client = await spawnServer(["--exited-retention-ms", "50"]);
  try {
    const old = await client.spawn({ argv: ["true"], processId: "same" });
    await old.wait();
    await new Promise((r) => setTimeout(r, 200)); // retention expires
    const fresh = await client.spawn({ argv: ["sleep", "30"], processId: "same" });
    assert.equal(await old.terminate(), false);
    await assert.rejects(old.write("x"), ProcessError);
    assert.equal(await fresh.terminate(), true);
    assert.equal((await fresh.wait()).signal, "SIGKILL");
  } finally {
    await client.close();
  }
});
