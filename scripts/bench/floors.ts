/**
 * The floors: the same work as each measurement, done directly by this
 * process without the server, in the same run. A figure is only meaningful
 * next to its floor, since the shared machine's speed varies from run to
 * run.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { open, readFile, rename, stat } from "node:fs/promises";
import process from "node:process";
import { ReadStream } from "node:tty";
import { loadNativePty } from "../../src/process/pty_native.ts";
import { ENV, MiB } from "./config.ts";

/** The environment of the PTY floors' children. */
const PTY_ENV = ["PATH=/usr/bin:/bin"];

/** Milliseconds for the runtime to start, run `script` and exit. */
export function runtimeStartMs(script: string): number {
  const t0 = performance.now();
  spawnSync(process.execPath, ["run", "-A", script]);
  return performance.now() - t0;
}

/**
 * Milliseconds from spawning `argv` to its exit. `detached` starts it in a
 * session of its own, as the server does with every child.
 */
export function directSpawn(argv: string[], detached = false): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const ch = spawn(argv[0], argv.slice(1), { stdio: "ignore", env: ENV, detached });
    ch.on("exit", () => resolve(performance.now() - t0));
  });
}

/** MiB/s reading `bytes` of a child's stdout pipe. */
export function rawPipeRead(bytes: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const ch = spawn("head", ["-c", String(bytes), "/dev/zero"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    let n = 0;
    ch.stdout!.on("data", (d: Uint8Array) => n += d.length);
    ch.stdout!.on("end", () => resolve((n / MiB) / ((performance.now() - t0) / 1000)));
  });
}

/** MiB/s reading `bytes` from a PTY master, through the same addon as the server. */
export function rawPtyRead(bytes: number): Promise<number> {
  const pty = loadNativePty();
  const t0 = performance.now();
  return new Promise((resolve) => {
    let n = 0;
    let done = false;
    // The stream's error (EIO once the child is gone) and the exit callback
    // both end the read; only the first counts.
    const finish = () => {
      if (done) return;
      done = true;
      resolve((n / MiB) / ((performance.now() - t0) / 1000));
    };
    const f = pty.fork(
      "head",
      ["-c", String(bytes), "/dev/zero"],
      PTY_ENV,
      "/",
      80,
      24,
      -1,
      -1,
      false,
      "",
      // Leave the output still buffered in the PTY time to be read.
      () => setTimeout(finish, 50),
    );
    const s = new ReadStream(f.fd);
    s.on("data", (d: Uint8Array) => n += d.length);
    s.on("error", finish);
  });
}

/** Milliseconds per keystroke written to `cat` on a PTY until its echo is read. */
export async function rawPtyEcho(rounds: number): Promise<number[]> {
  const pty = loadNativePty();
  const f = pty.fork("cat", [], PTY_ENV, "/", 80, 24, -1, -1, false, "", () => {});
  const s = new ReadStream(f.fd);
  let waiter: (() => void) | undefined;
  s.on("data", () => waiter?.());
  s.on("error", () => {});
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await new Promise<void>((r) => {
      waiter = r;
      s.write("x");
    });
    out.push(performance.now() - t0);
  }
  process.kill(f.pid, "SIGKILL");
  s.destroy();
  return out;
}

/**
 * MiB/s of `bytes` through a PTY read by script(1), a C program: the
 * kernel's own PTY ceiling. Undefined where util-linux's script is missing.
 */
export function scriptPtyRead(bytes: number): number | undefined {
  if (!existsSync("/usr/bin/script")) return undefined;
  const t0 = performance.now();
  spawnSync("/usr/bin/script", ["-q", "-c", `head -c ${bytes} /dev/zero`, "/dev/null"], {
    stdio: ["ignore", "ignore", "ignore"],
  });
  return (bytes / MiB) / ((performance.now() - t0) / 1000);
}

/** MiB/s reading `file` (of `bytes`) whole. */
export async function directFileRead(file: string, bytes: number): Promise<number> {
  const t0 = performance.now();
  await readFile(file);
  return (bytes / MiB) / ((performance.now() - t0) / 1000);
}

/**
 * MiB/s writing `payload` to `file`. The server writes a temp file, fsyncs
 * and renames; so does the floor.
 */
export async function directFileWrite(file: string, payload: Uint8Array): Promise<number> {
  const t0 = performance.now();
  const fh = await open(`${file}.floor`, "w");
  await fh.writeFile(payload);
  await fh.sync();
  await fh.close();
  await rename(`${file}.floor`, file);
  return (payload.length / MiB) / ((performance.now() - t0) / 1000);
}

/** Milliseconds to stat `file`. */
export async function directStatMs(file: string): Promise<number> {
  const t0 = performance.now();
  await stat(file);
  return performance.now() - t0;
}
