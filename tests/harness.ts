/**
 * Black-box test harness: starts the real server as a child process and
 * speaks JSON-RPC to it over its stdin/stdout, with no code shared with the
 * server beyond the wire format.
 *
 * The server command defaults to `deno run -A cli.ts`; set
 * `EXEC_SERVER_CMD` (a JSON array, or a space-separated string) to test
 * another build, e.g. `["node","npm/esm/cli.js"]` or `["dist/exec-server"]`.
 * A test that must run one particular build passes `command` to
 * {@linkcode TestServer} (see {@linkcode denoServerCommand} and
 * {@linkcode nodeServerCommand}).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import process from "node:process";
import { Buffer } from "node:buffer";

const ROOT = new URL("../", import.meta.url).pathname;

/** The command that starts the server under test (`EXEC_SERVER_CMD` or Deno). */
export function serverCommand(): string[] {
  const env = process.env.EXEC_SERVER_CMD;
  if (env) return env.trim().startsWith("[") ? JSON.parse(env) : env.split(" ");
  return denoServerCommand();
}

/** The command that runs the server from source under Deno (`cli.ts`). */
export function denoServerCommand(): string[] {
  return [process.execPath, "run", "-A", `${ROOT}cli.ts`];
}

/** Thrown when a server build that a test needs has not been built. */
export class MissingBuildError extends Error {
  /** @param path the missing entry point; @param how the command that builds it */
  constructor(path: string, how: string) {
    super(`${path} is missing: build it first with \`${how}\``);
    this.name = "MissingBuildError";
  }
}

/**
 * The command that runs the npm build under Node (`node npm/esm/cli.js`).
 *
 * @throws {MissingBuildError} when `npm/esm/cli.js` has not been built
 */
export function nodeServerCommand(): string[] {
  const cli = `${ROOT}npm/esm/cli.js`;
  if (!existsSync(cli)) throw new MissingBuildError(cli, "npx deno task build:npm");
  return ["node", cli];
}

/** Options of {@linkcode TestServer}. */
export interface TestServerOptions {
  /** Extra environment for the server process. */
  env?: Record<string, string>;
  /** The server command (default {@linkcode serverCommand}). */
  command?: string[];
}

/** A message received from the server. */
// deno-lint-ignore no-explicit-any
export type Msg = Record<string, any>;

/** The environment most tests give their children. */
export const ENV: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin" };

/** Base64 helpers for test payloads. */
export const b64 = (s: string | Uint8Array): string => Buffer.from(s).toString("base64");
/** Decode base64 to a string. */
export const unb64 = (s: string): string => Buffer.from(s, "base64").toString("utf8");
/** Decode base64 to bytes. */
export const unb64Bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "base64"));

/** A running server under test. */
export class TestServer {
  readonly child: ReturnType<typeof spawn>;
  readonly messages: Msg[] = [];
  /** Lines on stdout that were not JSON: always a server bug. */
  readonly badLines: string[] = [];
  stderr = "";
  #nextId = 1000;
  #buf = "";
  #listeners = new Set<() => void>();
  readonly exited: Promise<{ code: number | null; signal: string | null }>;

  constructor(args: string[] = [], opts: TestServerOptions = {}) {
    const [cmd, ...rest] = opts.command ?? serverCommand();
    this.child = spawn(cmd, [...rest, ...args], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ...opts.env },
    });
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (d: string) => {
      this.#buf += d;
      // Rescanning the whole buffer per chunk is quadratic on a long line.
      if (!d.includes("\n")) return;
      let nl;
      while ((nl = this.#buf.indexOf("\n")) >= 0) {
        const line = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        if (!line.trim()) continue;
        try {
          this.messages.push(JSON.parse(line));
        } catch {
          this.badLines.push(line);
        }
      }
      for (const l of [...this.#listeners]) l();
    });
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (d: string) => this.stderr += d);
    this.exited = new Promise((resolve) => {
      this.child.on("exit", (code, signal) => {
        for (const l of [...this.#listeners]) l();
        resolve({ code, signal });
      });
    });
  }

  /** Start a server and complete the handshake. */
  static async start(args: string[] = [], opts: TestServerOptions = {}): Promise<TestServer> {
    const s = new TestServer(args, opts);
    try {
      const init = await s.request("initialize", { clientName: "test" });
      if (init.result?.protocolVersion !== "exec-server.v0") {
        throw new Error(`bad initialize answer: ${JSON.stringify(init)}\n${s.stderr}`);
      }
    } catch (err) {
      s.kill();
      await s.exited;
      throw err;
    }
    s.notify("initialized", {});
    return s;
  }

  /** A fresh request id, for tests that write requests by hand. */
  newId(): number {
    return this.#nextId++;
  }

  /** Wait for the response (result or error) with this id. */
  response(id: number | string, timeoutMs = 20_000): Promise<Msg> {
    return this.waitFor(
      (m) => m.id === id && !("method" in m),
      timeoutMs,
      `response #${JSON.stringify(id)}`,
    );
  }

  /** The arrival index of the first message satisfying `pred`, or -1. */
  indexOf(pred: (m: Msg) => boolean): number {
    return this.messages.findIndex(pred);
  }

  /** Write a raw line (no newline added when `raw` ends with one). */
  writeRaw(raw: string | Uint8Array): void {
    this.child.stdin!.write(raw);
  }

  /** Send a message object as one line. */
  send(msg: Msg): void {
    this.writeRaw(JSON.stringify(msg) + "\n");
  }

  /** Send a notification. */
  notify(method: string, params?: unknown): void {
    this.send(params === undefined ? { method } : { method, params });
  }

  /** Send a request and wait for its response (result or error message). */
  async request(method: string, params?: unknown, timeoutMs = 20_000): Promise<Msg> {
    const id = this.#nextId++;
    this.send(params === undefined ? { id, method } : { id, method, params });
    return await this.waitFor(
      (m) => m.id === id && !("method" in m),
      timeoutMs,
      `response to ${method} #${id}`,
    );
  }

  /** Send a request and return its result, failing on an error. */
  async call(method: string, params?: unknown, timeoutMs?: number): Promise<Msg> {
    const res = await this.request(method, params, timeoutMs);
    if (res.error) throw new Error(`${method} failed: ${JSON.stringify(res.error)}`);
    return res.result;
  }

  /** Wait until a received message satisfies `pred`; returns it. */
  waitFor(pred: (m: Msg) => boolean, timeoutMs = 20_000, what = "message"): Promise<Msg> {
    return new Promise((resolve, reject) => {
      let scanned = 0;
      const check = () => {
        for (; scanned < this.messages.length; scanned++) {
          if (pred(this.messages[scanned])) {
            cleanup();
            resolve(this.messages[scanned]);
            return;
          }
        }
        if (this.child.exitCode !== null || this.child.signalCode !== null) {
          cleanup();
          reject(new Error(`server exited while waiting for ${what}\n${this.stderr}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}\nstderr: ${
              this.stderr.slice(-2000)
            }`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.#listeners.delete(check);
      };
      this.#listeners.add(check);
      check();
    });
  }

  /** Wait for `process/exited` of `processId`. */
  waitExited(processId: string, timeoutMs = 20_000): Promise<Msg> {
    return this.waitFor(
      (m) => m.method === "process/exited" && m.params.processId === processId,
      timeoutMs,
      `process/exited of ${processId}`,
    );
  }

  /** All `process/output` notifications of a process, in arrival order. */
  outputsOf(processId: string, stream?: string): Msg[] {
    return this.messages.filter((m) =>
      m.method === "process/output" && m.params.processId === processId &&
      (stream === undefined || m.params.stream === stream)
    );
  }

  /** The concatenated output bytes of a process. */
  outputBytes(processId: string, stream?: string): Uint8Array {
    return Buffer.concat(
      this.outputsOf(processId, stream).map((m) => Buffer.from(m.params.chunk, "base64")),
    );
  }

  /** The concatenated output of a process as text. */
  outputText(processId: string, stream?: string): string {
    return new TextDecoder().decode(this.outputBytes(processId, stream));
  }

  /** Start a process with test defaults; returns the response message. */
  start(processId: string, argv: string[], extra: Msg = {}): Promise<Msg> {
    return this.request("process/start", {
      processId,
      argv,
      cwd: "/tmp",
      env: ENV,
      tty: false,
      ...extra,
    });
  }

  /** Close stdin (EOF) and wait for the server to exit. */
  async close(): Promise<{ code: number | null; signal: string | null }> {
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    const res = await this.exited;
    clearTimeout(timer);
    return res;
  }

  /**
   * Stop consuming the server's stdout, as a slow client would: once the
   * pipe fills, the server's writes block and its flow control kicks in.
   */
  pauseReading(): void {
    this.child.stdout!.pause();
  }

  /** Consume the server's stdout again after {@linkcode pauseReading}. */
  resumeReading(): void {
    this.child.stdout!.resume();
  }

  /** SIGKILL the server at once (for cleanup after a failure). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGKILL");
    }
  }

  /**
   * Close the server unless the test already did, so that `await using`
   * never leaves a server (and its children) behind when a test fails.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    await this.close();
  }
}

/** Whether a pid is alive and not a zombie. */
export async function isAlive(pid: number): Promise<boolean> {
  const info = await procStat(pid);
  return info !== undefined && info.state !== "Z" && info.state !== "X";
}

/** What `/proc/PID/stat` says about a process. */
export interface ProcInfo {
  /** The process id. */
  pid: number;
  /** The parent's pid. */
  ppid: number;
  /** The command name (at most 15 characters). */
  comm: string;
  /** The state letter: R, S, D, Z, ... */
  state: string;
  /** The process group id. */
  pgrp: number;
  /** The session id. */
  session: number;
}

/** Read `/proc/PID/stat`; undefined when the process is gone. */
export async function procStat(pid: number): Promise<ProcInfo | undefined> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: split at the last ')'.
  const close = stat.lastIndexOf(")");
  const rest = stat.slice(close + 2).split(" ");
  return {
    pid,
    comm: stat.slice(stat.indexOf("(") + 1, close),
    state: rest[0],
    ppid: Number(rest[1]),
    pgrp: Number(rest[2]),
    session: Number(rest[3]),
  };
}

/** The live (non-zombie) descendants of `pid`, found through `/proc`. */
export async function descendants(pid: number): Promise<ProcInfo[]> {
  const names = await readdir("/proc");
  const all = await Promise.all(
    names.filter((n) => /^\d+$/.test(n)).map((n) => procStat(Number(n))),
  );
  const byParent = new Map<number, ProcInfo[]>();
  for (const info of all) {
    if (!info) continue;
    const list = byParent.get(info.ppid) ?? [];
    list.push(info);
    byParent.set(info.ppid, list);
  }
  const out: ProcInfo[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of byParent.get(queue.pop()!) ?? []) {
      if (child.state !== "Z" && child.state !== "X") out.push(child);
      queue.push(child.pid);
    }
  }
  return out;
}

/** Poll `cond` every 20 ms until it holds or `timeoutMs` passes. */
export async function eventually(
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
