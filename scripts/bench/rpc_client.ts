/**
 * A lean JSON-RPC client for the benchmark. It writes requests straight to
 * the server's stdin and parses its stdout with nothing in between, so that
 * the figures measure the server rather than the project's own client.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { ENV } from "./config.ts";

/** A decoded message; the bench reads only a few fields of each. */
// deno-lint-ignore no-explicit-any
export type Msg = Record<string, any>;

/** A server child and the requests in flight to it. */
export class Conn {
  /** The server process. */
  child: ReturnType<typeof spawn>;
  #parts: string[] = [];
  #nextId = 1;
  #pending = new Map<number, (m: Msg) => void>();
  /** Per-process notification handlers, by processId. */
  handlers: Map<string, (m: Msg) => void> = new Map();
  /**
   * The dialect the server answered in: `codex` when `initialize` returned a
   * `sessionId` (the upstream server always does), else `v0`. Requests are
   * written in v0 terms and translated for the Codex dialect.
   */
  dialect: "v0" | "codex" = "v0";

  /** Starts the server; its stderr goes to ours. */
  constructor(cmd: string[]) {
    this.child = spawn(cmd[0], cmd.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (d: string) => {
      // Search only the new text for newlines: a 90 MB line must not be
      // rescanned for every chunk that extends it.
      let nl = d.indexOf("\n");
      if (nl < 0) {
        this.#parts.push(d);
        return;
      }
      let start = 0;
      while (nl >= 0) {
        this.#parts.push(d.slice(start, nl));
        const line = this.#parts.length === 1 ? this.#parts[0] : this.#parts.join("");
        this.#parts = [];
        if (line) this.#dispatch(JSON.parse(line));
        start = nl + 1;
        nl = d.indexOf("\n", start);
      }
      if (start < d.length) this.#parts.push(d.slice(start));
    });
  }

  #dispatch(m: Msg): void {
    if ("id" in m && !("method" in m)) {
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      p?.(m);
    } else {
      const id = m.params?.processId;
      if (id !== undefined) this.handlers.get(id)?.(m);
    }
  }

  /** Sends a request; resolves with its result, rejects with its error. */
  call(method: string, params?: unknown): Promise<Msg> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(
        id,
        (m) => m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result),
      );
      const sent = this.dialect === "codex" ? toCodexParams(method, params) : params;
      this.child.stdin!.write(JSON.stringify({ id, method, params: sent }) + "\n");
    });
  }

  /** The notification that ends a process's output: `exited` (v0) or `closed` (Codex). */
  get endMethod(): string {
    return this.dialect === "codex" ? "process/closed" : "process/exited";
  }

  /** Sends a notification. */
  notify(method: string, params?: unknown): void {
    this.child.stdin!.write(JSON.stringify({ method, params }) + "\n");
  }

  /** The handshake: `initialize` (the Codex CLI's when `codex`), then `initialized`. */
  async init(codex = false): Promise<Msg> {
    const r = this.call("initialize", {
      clientName: "bench",
      ...(codex ? { resumeSessionId: null } : {}),
    });
    this.notify("initialized", {});
    const result = await r;
    this.dialect = typeof result.sessionId === "string" ? "codex" : "v0";
    return result;
  }

  /** Closes the server's stdin and waits for it to exit. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.child.on("exit", () => resolve());
      this.child.stdin!.end();
    });
  }
}

/** The decoded length of base64 text, without decoding it. */
export function b64Len(s: string): number {
  const pad = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
  return (s.length / 4) * 3 - pad;
}

let seq = 0;

/**
 * Runs `argv` through the server to its exit, counting the output bytes.
 * The time runs from the start request to the `process/exited`
 * notification.
 */
export async function runProcess(
  c: Conn,
  argv: string[],
  tty: boolean,
): Promise<{ bytes: number; ms: number }> {
  const id = `b${++seq}`;
  let bytes = 0;
  const t0 = performance.now();
  const done = new Promise<void>((resolve) => {
    c.handlers.set(id, (m) => {
      if (m.method === "process/output") bytes += b64Len(m.params.chunk);
      else if (m.method === c.endMethod) {
        c.handlers.delete(id);
        resolve();
      }
    });
  });
  await c.call("process/start", { processId: id, argv, cwd: "/", env: ENV, tty });
  await done;
  return { bytes, ms: performance.now() - t0 };
}

let writeIds = 0;

const fileUri = (path: unknown): unknown =>
  typeof path === "string" && path.startsWith("/") ? `file://${encodeURI(path)}` : path;

/**
 * v0 params in the Codex dialect's terms: paths as `file://` URIs, the
 * fields the upstream server requires on `process/start`, and `sandbox:
 * null` on file calls.
 */
export function toCodexParams(method: string, params: unknown): unknown {
  if (params === null || typeof params !== "object") return params;
  const p = { ...params } as Msg;
  if (method === "process/start") {
    return {
      arg0: null,
      pipeStdin: false,
      sandbox: null,
      enforceManagedNetwork: false,
      managedNetwork: null,
      ...p,
      cwd: fileUri(p.cwd),
    };
  }
  // The upstream server requires an id on every write (for retries).
  if (method === "process/write") return { writeId: `w${++writeIds}`, ...p };
  if (method.startsWith("fs/")) {
    for (const key of ["path", "sourcePath", "destinationPath"]) {
      if (key in p) p[key] = fileUri(p[key]);
    }
    return { ...p, sandbox: null };
  }
  return p;
}
