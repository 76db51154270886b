/**
 * Helpers on top of {@linkcode TestServer} that several test files share:
 * scoped servers and temp dirs, the handshake's result, and waiting on or
 * reading a process's output. Kept apart from harness.ts to keep that file
 * short.
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { b64, type Msg, TestServer, type TestServerOptions } from "./harness.ts";

/**
 * Run `fn` in a fresh temp dir named `${prefix}XXXXXX`, removing it afterwards
 * even when a test left it unreadable (the chmod undoes a `chmod 000`).
 */
export async function withTempDir(
  fn: (dir: string) => Promise<void>,
  prefix = "exec-server-test-",
): Promise<void> {
  const dir = await mkdtemp(`${tmpdir()}/${prefix}`);
  try {
    await fn(dir);
  } finally {
    await chmod(dir, 0o700).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Run `fn` against a fresh server (handshake done) started with `args` and
 * `command` (default: the build under test), then close it and check that
 * it exited 0: a crash at shutdown is a failure of the test too.
 */
export async function withServer(
  fn: (s: TestServer) => Promise<void>,
  args: string[] = [],
  command?: string[],
): Promise<void> {
  const s = await TestServer.start(args, command ? { command } : {});
  try {
    await fn(s);
  } finally {
    const { code } = await s.close();
    assert.equal(code, 0, `server exit code; stderr: ${s.stderr}`);
  }
}

/**
 * A server (quiet, started with `options`) that has done the Codex CLI's
 * handshake: `initialize` with `resumeSessionId: null`, then `initialized`.
 */
export async function codexServer(options: TestServerOptions = {}): Promise<TestServer> {
  const s = new TestServer(["--log-level", "off"], options);
  await s.call("initialize", { clientName: "codex-environment", resumeSessionId: null });
  s.notify("initialized", {});
  return s;
}

/** The `initialize` result a {@linkcode TestServer.start} received. */
export function initializeResult(s: TestServer): Msg {
  const init = s.messages.find((m) => m.result?.protocolVersion !== undefined);
  assert.ok(init, "no initialize result was received");
  return init.result;
}

/** Wait until the output of process `id` (all streams) contains `text`. */
export function waitOutput(
  s: TestServer,
  id: string,
  text: string,
  timeoutMs = 10_000,
): Promise<Msg> {
  return s.waitFor(
    () => s.outputText(id).includes(text),
    timeoutMs,
    `${JSON.stringify(text)} in the output of ${id}`,
  );
}

/** Wait until the output of process `id` matches `re`; returns the match. */
export async function waitMatch(
  s: TestServer,
  id: string,
  re: RegExp,
  timeoutMs = 10_000,
): Promise<RegExpExecArray> {
  await s.waitFor(() => re.test(s.outputText(id)), timeoutMs, `${re} in the output of ${id}`);
  return re.exec(s.outputText(id))!;
}

/** Call `process/read` with `params`; returns the result, failing on an error. */
export async function readProcess(s: TestServer, params: Msg): Promise<Msg> {
  const res = await s.request("process/read", params);
  assert.equal(res.error, undefined, JSON.stringify(res.error));
  return res.result;
}

/**
 * Write `parts` to the stdin of `cat` process `id` one at a time, waiting for
 * each to come back, so that each part is exactly one output chunk.
 */
export async function feedChunks(s: TestServer, id: string, parts: string[]): Promise<void> {
  const before = s.outputsOf(id).length;
  for (let i = 0; i < parts.length; i++) {
    await s.request("process/write", { processId: id, chunk: b64(parts[i]) });
    await s.waitFor(
      (m) =>
        m.method === "process/output" && m.params.processId === id &&
        m.params.seq === before + i + 1,
      10_000,
      `chunk ${before + i + 1} of ${id}`,
    );
  }
}
