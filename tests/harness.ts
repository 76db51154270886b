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
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import process from "node:process";
import { Buffer } from "node:buffer";

/** The repository root, with a trailing slash (tests run from any cwd). */
export const ROOT: string = new URL("../", import.meta.url).pathname;

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
  /**
   * This project's server (default true; false for upstream's, or ssh): it
   * gets `--no-session-dir` unless `args` name one, or an ended server
   * holding a session would make `close()` wait out its grace window.
   */
  ours?: boolean;
}

/** A message received from the server. */
// deno-lint-ignore no-explicit-any
export type Msg = Record<string, any>;

/** The environment most tests give their children. */
export const ENV: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin" };

/** `process/start` params with test defaults (cwd /tmp, {@linkcode ENV}, pipes), then `extra`. */
export function startParams(processId: string, argv: string[], extra: Msg = {}): Msg {
  return { processId, argv, cwd: "/tmp", env: ENV, tty: false, ...extra };
}

/** Base64 helpers for test payloads. */
export const b64 = (s: string | Uint8Array): string => Buffer.from(s).toString("base64");
/** Decode base64 to a string. */
export const unb64 = (s: string): string => Buffer.from(s, "base64").toString("utf8");
/** Decode base64 to bytes. */
export const unb64Bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "base64"));

/** What {@linkcode waitForMessage} waits on, and how it fails. */
export interface MessageWait {
  /** The messages received so far; the receiver appends to it. */
  messages: Msg[];
  /** Called by the receiver after each batch of messages (and on exit). */
  listeners: Set<() => void>;
  /** The message wanted. */
  pred: (m: Msg) => boolean;
  /** How long to wait. */
  timeoutMs: number;
  /** The error to fail with at once when waiting is pointless, else undefined. */
  failed?: () => Error | undefined;
  /** The error to fail with at the timeout (built late, to include fresh logs). */
  timedOut: () => Error;
}

/**
 * Resolve with the first message satisfying `w.pred`, scanning each message
 * once: rescanning all on every batch would be quadratic on a long flood.
 * Shared by {@linkcode TestServer} and the websocket tests' client.
 */
export function waitForMessage(w: MessageWait): Promise<Msg> {
  return new Promise((resolve, reject) => {
    let scanned = 0;
    const check = () => {
      for (; scanned < w.messages.length; scanned++) {
        if (w.pred(w.messages[scanned])) {
          cleanup();
          resolve(w.messages[scanned]);
          return;
        }
      }
      const err = w.failed?.();
      if (err) {
        cleanup();
        reject(err);
      }
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(w.timedOut());
    }, w.timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      w.listeners.delete(check);
    };
    w.listeners.add(check);
    check();
  });
}

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
    const own = opts.ours !== false && !args.some((a) => /^--(no-)?session-dir/.test(a));
    this.child = spawn(cmd, [...rest, ...args, ...(own ? ["--no-session-dir"] : [])], {
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
    return waitForMessage({
      messages: this.messages,
      listeners: this.#listeners,
      pred,
      timeoutMs,
      // A dead server never sends it: fail now rather than at the timeout.
      failed: () =>
        this.child.exitCode !== null || this.child.signalCode !== null
          ? new Error(`server exited while waiting for ${what}\n${this.stderr}`)
          : undefined,
      timedOut: () =>
        new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}\nstderr: ${
            this.stderr.slice(-2000)
          }`,
        ),
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

  /** Start a process with {@linkcode startParams}; returns the response message. */
  start(processId: string, argv: string[], extra: Msg = {}): Promise<Msg> {
    return this.request("process/start", startParams(processId, argv, extra));
  }

  /** Close stdin (EOF) and wait for the server to exit. */
  async close(): Promise<{ code: number | null; signal: string | null }> {
    this.child.stdin!.end();
    return await exitedOrKilled(this.child, this.exited);
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

/**
 * Await `exited`, SIGKILLing `child` if it is still running after 10 s: a
 * server that ignores its shutdown must fail its test, not hang the suite.
 */
export async function exitedOrKilled<T>(child: ChildProcess, exited: Promise<T>): Promise<T> {
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
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

/**
 * The live pids whose argv[0] is `argv0`. Tests mark a process by running it
 * under a unique argv[0] (`exec -a`); other processes may carry the marker
 * as an argument, so only argv[0] identifies it.
 */
export async function pidsByArgv0(argv0: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8");
      if (cmdline.split("\0")[0] === argv0 && await isAlive(Number(name))) pids.push(Number(name));
    } catch {
      // Exited while we looked.
    }
  }
  return pids;
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
