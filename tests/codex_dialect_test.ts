/**
 * The Codex CLI's dialect over stdio, message by message (../shared's
 * CODEX_CLI.md, sections 2 to 4): the handshake, process numbering with
 * `exited` and `closed`, `envPolicy`, write statuses, spawn failures,
 * files, and the refusal of malformed sandboxes (tests/sandbox_*_test.ts
 * run sandboxes for real).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { b64, type Msg, TestServer, unb64 } from "./harness.ts";

/** A server whose first message is the Codex CLI's `initialize`. */
async function codexServer(env: Record<string, string> = {}): Promise<[TestServer, Msg]> {
  const s = new TestServer(["--log-level", "off"], { env });
  const init = await s.request("initialize", {
    clientName: "codex-environment",
    resumeSessionId: null,
  });
  s.notify("initialized", {});
  return [s, init];
}

/** A `process/start` as the CLI sends it. */
function start(s: TestServer, processId: string, cmd: string, extra: Msg = {}): Promise<Msg> {
  return s.request("process/start", {
    processId,
    metadata: { threadId: "t", toolCallId: "call_1" },
    argv: ["/bin/sh", "-c", cmd],
    cwd: "file:///tmp",
    env: { TERM: "dumb" },
    tty: false,
    pipeStdin: false,
    arg0: null,
    sandbox: null,
    enforceManagedNetwork: false,
    managedNetwork: null,
    ...extra,
  });
}

function closed(s: TestServer, id: string): Promise<Msg> {
  return s.waitFor((m) => m.method === "process/closed" && m.params.processId === id);
}

Deno.test("codex dialect: the handshake answers sessionId and environmentInfo", async () => {
  const [s, init] = await codexServer();
  await using _ = s;
  const r = init.result;
  assert.match(r.sessionId, /^[0-9a-f-]{36}$/);
  assert.equal(r.protocolVersion, undefined, "no v0 fields in this dialect");
  const info = r.environmentInfo;
  assert.ok(info.shell.path.startsWith("/") && info.shell.name.length > 0);
  // The upstream protocol level spoken, which the CLI compares with feature versions.
  assert.equal(info.executorVersion, "0.171.0");
  for (const key of ["cwd", "userHomeDir", "tempDir"]) assert.match(info[key], /^file:\/\/\//);
  assert.equal(info.platformOs, "linux");
  // Upstream 0.171's flags that are implemented; the rest are left out (§9.8).
  assert.deepEqual(info.capabilities, {
    fsWatchMissing: true,
    environmentConfigRead: true,
    httpHeaderEnvVars: true,
    capabilityDiscoveryV2: true,
    capabilityDiscoverySandbox: true,
    sandboxedFileStreaming: true,
    fileWriteStreaming: true,
  });
  assert.deepEqual((await s.call("environment/info", {})).shell, info.shell);
});

Deno.test("codex dialect: output, exited and closed share one sequence", async () => {
  const [s] = await codexServer();
  await using _ = s;
  const res = await start(s, "p1", "echo hi; echo err >&2");
  assert.deepEqual(res.result, { processId: "p1", sandboxType: "none" });
  const done = await closed(s, "p1");
  const notes = s.messages.filter((m) => m.params?.processId === "p1");
  const seqs = notes.map((m) => [m.method, m.params.seq]);
  assert.deepEqual(seqs.slice(-2), [["process/exited", 3], ["process/closed", 4]]);
  assert.equal(done.params.seq, 4);
  const exited = notes.find((m) => m.method === "process/exited")!;
  const { durationMs, ...rest } = exited.params;
  assert.equal(typeof durationMs, "number");
  assert.deepEqual(rest, {
    processId: "p1",
    seq: 3,
    exitCode: 0,
    sandboxDenied: false,
    signal: null,
  });
  assert.equal(s.outputText("p1", "stdout"), "hi\n");
  const read = await s.call("process/read", { processId: "p1", afterSeq: 0, maxBytes: null });
  assert.equal(read.nextSeq, 5);
  assert.equal(read.closed, true);
  assert.equal(read.exited, true);
  assert.equal(read.failure, null);
  assert.equal(read.sandboxDenied, false);
  const after = await s.call("process/read", { processId: "p1", afterSeq: 2, waitMs: 0 });
  assert.deepEqual(after.chunks, []);
  assert.equal(after.closed, true);
  assert.deepEqual(await s.call("process/terminate", { processId: "p1" }), { running: false });
});

Deno.test("codex dialect: envPolicy builds the environment on the server", async () => {
  const [s] = await codexServer({ MY_API_TOKEN: "t", KEEP_ME: "k", DROP_ME: "d" });
  await using _ = s;
  // env itself, not through a shell, which would add PWD.
  const printEnv = "";
  const envArgv = { argv: ["/usr/bin/env"] };
  const policy = (p: Msg) => ({
    ...envArgv,
    envPolicy: { ignoreDefaultExcludes: false, exclude: [], set: {}, includeOnly: [], ...p },
  });
  await start(
    s,
    "all",
    printEnv,
    policy({ inherit: "all", exclude: ["drop_*"], set: { ADDED: "1" } }),
  );
  await start(s, "core", printEnv, policy({ inherit: "core" }));
  await start(s, "only", printEnv, policy({ inherit: "all", includeOnly: ["KEEP_*", "TERM"] }));
  await start(s, "none", printEnv, { ...envArgv, envPolicy: null, env: { A: "1" } });
  for (const id of ["all", "core", "only", "none"]) await closed(s, id);
  const all = s.outputText("all");
  assert.match(all, /^KEEP_ME=k$/m);
  assert.match(all, /^ADDED=1$/m);
  assert.match(all, /^TERM=dumb$/m);
  assert.doesNotMatch(all, /MY_API_TOKEN/, "default excludes drop *TOKEN*");
  assert.doesNotMatch(all, /DROP_ME/, "exclude globs ignore case");
  const core = s.outputText("core");
  assert.match(core, /^HOME=/m);
  assert.doesNotMatch(core, /KEEP_ME/);
  assert.equal(s.outputText("only").trim().split("\n").sort().join(","), "KEEP_ME=k,TERM=dumb");
  assert.match(s.outputText("none"), /^PATH=\//m, "without envPolicy a default PATH is given");
});

Deno.test("codex dialect: write statuses and idempotent write ids", async () => {
  const [s] = await codexServer();
  await using _ = s;
  await start(s, "cat", "cat", { pipeStdin: true });
  const write = (processId: string, text: string, writeId: unknown) =>
    s.call("process/write", { processId, chunk: b64(text), writeId });
  assert.deepEqual(await write("cat", "one\n", "w1"), { status: "accepted" });
  assert.deepEqual(await write("cat", "one\n", "w1"), { status: "accepted" });
  assert.deepEqual(await write("cat", "two\n", "w2"), { status: "accepted" });
  assert.deepEqual(await write("nope", "x", "w3"), { status: "unknownProcess" });
  await s.call("process/closeStdin", { processId: "cat" });
  await closed(s, "cat");
  assert.equal(s.outputText("cat"), "one\ntwo\n", "a repeated writeId was written twice");
  assert.deepEqual(await write("cat", "late", "w4"), { status: "stdinClosed" });
});

Deno.test("codex dialect: signal answers {} and interrupt exits 130", async () => {
  const [s] = await codexServer();
  await using _ = s;
  // Signalled once it has said it runs: a signal during start-up raced it
  // (one run in about twelve never exited).
  await start(s, "sleeper", "echo ready; exec sleep 30");
  await s.waitFor((m) => m.method === "process/output" && m.params.processId === "sleeper");
  assert.deepEqual(
    await s.call("process/signal", { processId: "sleeper", signal: "interrupt" }),
    {},
  );
  await closed(s, "sleeper");
  const exited = s.messages.find((m) =>
    m.method === "process/exited" && m.params.processId === "sleeper"
  );
  assert.equal(exited!.params.exitCode, 130);
});

Deno.test("codex dialect: spawn failures carry data.kind, malformed sandboxes -32602", async () => {
  const [s] = await codexServer();
  await using _ = s;
  const missing = await s.request("process/start", {
    processId: "m",
    argv: ["no-such-program-here"],
    cwd: "file:///tmp",
    env: {},
    tty: false,
  });
  assert.equal(missing.error?.code, -32603);
  assert.equal(missing.error.data?.kind, "spawnNotFound");
  const noCwd = await start(s, "c", "true", { cwd: "file:///no/such/dir" });
  assert.equal(noCwd.error?.data?.kind, "spawnNotFound");
  const sandboxed = await start(s, "x", "touch /tmp/should-not-exist-codex", {
    sandbox: { permissions: { type: "managed" } },
  });
  assert.equal(sandboxed.error?.code, -32602);
  assert.match(sandboxed.error.message, /sandbox\.permissions\.file_system must be an object/);
  const fsSandboxed = await s.request("fs/getMetadata", { path: "file:///tmp", sandbox: {} });
  assert.equal(fsSandboxed.error?.code, -32602);
  assert.match(fsSandboxed.error.message, /sandbox\.permissions must be an object/);
  // The server is alive and unconfined starts still run.
  await start(s, "ok", "true");
  await closed(s, "ok");
});

Deno.test("codex dialect: files — -32004, not a file, metadata, canonicalize", async () => {
  const [s] = await codexServer();
  await using _ = s;
  const dir = await mkdtemp(join(tmpdir(), "codex-fs-"));
  try {
    await writeFile(join(dir, "f.txt"), "12345");
    await symlink(join(dir, "f.txt"), join(dir, "link"));
    const uri = (p: string) => `file://${join(dir, p)}`;
    const gone = await s.request("fs/readFile", { path: uri("missing"), sandbox: null });
    assert.equal(gone.error?.code, -32004);
    const parent = await s.request("fs/writeFile", {
      path: uri("new/dir/x"),
      dataBase64: b64("x"),
      sandbox: null,
    });
    assert.equal(parent.error?.code, -32004, "apply_patch creates parents only after -32004");
    const isDir = await s.request("fs/readFile", { path: uri(""), sandbox: null });
    assert.equal(isDir.error?.code, -32600);
    assert.match(isDir.error.message, /is not a file/);
    const meta = await s.call("fs/getMetadata", { path: uri("link"), sandbox: null });
    assert.equal(meta.isSymlink, true);
    assert.equal(meta.isFile, true);
    assert.equal(meta.size, 5);
    const plain = await s.call("fs/getMetadata", { path: uri("f.txt"), sandbox: null });
    assert.equal(plain.isSymlink, false);
    const canon = await s.call("fs/canonicalize", { path: uri("link/../f.txt") });
    assert.equal(canon.path, uri("f.txt"));
    assert.equal(unb64((await s.call("fs/readFile", { path: uri("link") })).dataBase64), "12345");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("codex dialect: fs/watchMissing tells when a missing file appears", async () => {
  const [s] = await codexServer();
  await using _ = s;
  const dir = await mkdtemp(join(tmpdir(), "codex-watch-"));
  try {
    const agents = join(dir, "AGENTS.md");
    assert.deepEqual(
      await s.call("fs/watchMissing", { watchId: 7, missing: [`file://${agents}`], present: null }),
      { watching: true },
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(s.indexOf((m) => m.method === "fs/missingChanged"), -1);
    await writeFile(agents, "# rules\n");
    const note = await s.waitFor((m) => m.method === "fs/missingChanged", 5000);
    assert.deepEqual(note.params, { watchId: 7 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("codex dialect: a managed network proxy asked for is refused, never dropped", async () => {
  const [s] = await codexServer();
  await using _ = s;
  const enforced = await start(s, "p1", "touch /tmp/never-enforced", {
    enforceManagedNetwork: true,
  });
  assert.equal(enforced.error?.code, -32600);
  assert.match(enforced.error.message, /enforceManagedNetwork is not supported/);
  const proxied = await start(s, "p2", "true", {
    networkProxy: { config: { proxy: {} }, executionId: "e1" },
  });
  assert.equal(proxied.error?.code, -32600);
  assert.match(proxied.error.message, /networkProxy is not supported/);
  // null is "no proxy", as the CLI sends it to executors without the flag.
  const plain = await start(s, "p3", "true", { networkProxy: null });
  assert.deepEqual(plain.result, { processId: "p3", sandboxType: "none" });
});
