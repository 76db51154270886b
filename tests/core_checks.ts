/**
 * The core black-box checks every shipped build must pass (the single
 * binary, the npm package's bin): handshake, a pipe process, a PTY echo,
 * terminate, an fs round trip when the server offers fs/*, and on Linux
 * write-behind (src/runtime/write_behind.ts) when it offers positional
 * writes.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
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

const MiB = 1024 * 1024;

/** Bytes of `path` in the page cache (util-linux `fincore`). */
function cachedBytes(path: string): number {
  return Number(execFileSync("fincore", ["-b", "-n", "-o", "RES", path], { encoding: "utf8" }));
}

/** Write 1 MiB pieces `from` to `to` (exclusive) of `data` at their offsets, one at a time. */
async function writePieces(
  s: TestServer,
  path: string,
  data: Uint8Array,
  from: number,
  to: number,
): Promise<void> {
  for (let k = from; k < to; k++) {
    const piece = data.subarray(k * MiB, (k + 1) * MiB);
    await s.call("fs/writeFile", { path, dataBase64: b64(piece), offset: k * MiB });
  }
}

/**
 * Write-behind (Linux): positional `fs/writeFile` pieces of 1 MiB, as a
 * streamed upload sends them, take the clean pages of the pieces 8 MiB
 * behind out of the page cache, and the file stays intact.
 *
 * @returns false when the server has no positional writes (nothing was checked)
 */
export async function checkWriteBehind(s: TestServer, dir: string): Promise<boolean> {
  if (initializeResult(s).capabilities.fs?.writeOffset !== true) return false;
  const path = join(dir, "write-behind.bin");
  const data = new Uint8Array(randomBytes(16 * MiB));
  await writePieces(s, path, data, 0, 8);
  // Made clean first, so that whether a page may leave the cache does not
  // depend on how fast the disk took it.
  const handle = await open(path, "r");
  await handle.datasync();
  await handle.close();
  assert.equal(cachedBytes(path), 8 * MiB, "nothing leaves the cache in a file's first 8 MiB");
  await writePieces(s, path, data, 8, 16);
  // Pieces 8..15 dropped [0, 8) MiB; their own pages may stay.
  const cached = cachedBytes(path);
  assert.ok(cached <= 8 * MiB, `${cached} bytes of the first 8 MiB stayed in the cache`);
  // Buffer.equals, not deepEqual: the diff of two big arrays takes gigabytes to print.
  assert.ok(Buffer.from(await readFile(path)).equals(data), "the file's bytes differ");
  await rm(path);
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
  if (process.platform === "linux" && await checkWriteBehind(s, opts.dir)) ran.push("write-behind");
  return ran;
}
