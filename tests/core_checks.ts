/**
 * The core black-box checks every shipped build must pass (the single
 * binary, the npm package's bin): handshake, a pipe process, a PTY echo,
 * terminate, and an fs round trip when the server offers fs/*.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { VERSION } from "../src/version.ts";
import { b64, type TestServer, unb64Bytes } from "./harness.ts";
import { initializeResult } from "./server_helpers.ts";

/** Handshake: protocol, name and version. */
export function checkHandshake(s: TestServer): void {
  const init = initializeResult(s);
  assert.equal(init.protocolVersion, "exec-server.v0");
  assert.deepEqual(init.serverInfo, { name: "exec-server", version: VERSION });
  assert.ok(Array.isArray(init.capabilities?.methods), "capabilities.methods is not a list");
}

/** A pipe process: separate stdout and stderr, exit code. */
export async function checkPipe(s: TestServer, env: Record<string, string>): Promise<void> {
  const res = await s.start("pipe", ["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], { env });
  assert.deepEqual(res.result, { processId: "pipe" });
  const exited = await s.waitExited("pipe");
  assert.equal(exited.params.exitCode, 3);
  assert.equal(s.outputText("pipe", "stdout"), "out\n");
  assert.equal(s.outputText("pipe", "stderr"), "err\n");
}

/** A PTY process: the child sees a terminal and what is typed comes back. */
export async function checkPtyEcho(s: TestServer, env: Record<string, string>): Promise<void> {
  const res = await s.start("pty", ["/bin/sh", "-c", "tty; read line; echo got:$line"], {
    env,
    tty: true,
  });
  assert.deepEqual(res.result, { processId: "pty" }, JSON.stringify(res));
  await s.waitFor(() => s.outputText("pty").includes("/dev/pts/"), 10_000, "tty's answer");
  await s.call("process/write", { processId: "pty", chunk: b64("ping\n") });
  const exited = await s.waitExited("pty");
  assert.equal(exited.params.exitCode, 0);
  const text = s.outputText("pty", "pty");
  assert.match(text, /^\/dev\/pts\/\d+\r\n/);
  assert.match(text, /got:ping\r\n/);
}

/** terminate: a running sleeper is killed and reported once. */
export async function checkTerminate(s: TestServer, env: Record<string, string>): Promise<void> {
  await s.start("sleeper", ["sleep", "600"], { env });
  assert.deepEqual(await s.call("process/terminate", { processId: "sleeper" }), { running: true });
  const exited = await s.waitExited("sleeper");
  assert.notEqual(exited.params.exitCode, 0);
  assert.deepEqual(await s.call("process/terminate", { processId: "sleeper" }), {
    running: false,
  });
}

/**
 * Write, read back and remove a file under `dir`, when the server offers
 * fs/*.
 *
 * @returns false when the server has no fs methods (nothing was checked)
 */
export async function checkFsRoundTrip(s: TestServer, dir: string): Promise<boolean> {
  const methods: string[] = initializeResult(s).capabilities.methods;
  if (!["fs/writeFile", "fs/readFile", "fs/remove"].every((m) => methods.includes(m))) {
    return false;
  }
  const path = join(dir, "round trip.bin");
  const bytes = new Uint8Array([0, 1, 2, 255, 10, 13]);
  assert.deepEqual(await s.call("fs/writeFile", { path, dataBase64: b64(bytes) }), {});
  const read = await s.call("fs/readFile", { path });
  assert.deepEqual(unb64Bytes(read.dataBase64), bytes);
  assert.deepEqual(await s.call("fs/remove", { path }), {});
  const gone = await s.request("fs/readFile", { path });
  assert.ok(gone.error, `reading a removed file succeeded: ${JSON.stringify(gone)}`);
  return true;
}

/**
 * Run every core check against a started server.
 *
 * @returns the names of the checks that ran
 */
export async function runCoreChecks(
  s: TestServer,
  opts: { env: Record<string, string>; dir: string },
): Promise<string[]> {
  checkHandshake(s);
  await checkPipe(s, opts.env);
  await checkPtyEcho(s, opts.env);
  await checkTerminate(s, opts.env);
  const ran = ["handshake", "pipe", "pty echo", "terminate"];
  if (await checkFsRoundTrip(s, opts.dir)) ran.push("fs round trip");
  return ran;
}
