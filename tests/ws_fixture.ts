/**
 * A server child listening on a websocket (`--listen ws://...`), shared by
 * the websocket and client tests.
 */
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { eventually, exitedOrKilled, ROOT, serverCommand } from "./harness.ts";

/** A server started with `--listen ws://...`. */
export class WsServer {
  /** The server process. */
  readonly child: ChildProcess;
  /** All the server wrote to stderr so far. */
  stderr = "";
  /** The URL it listens on, once {@linkcode WsServer.start} saw it. */
  url = "";
  /** Settles when the server exits. */
  readonly exited: Promise<{ code: number | null; signal: string | null }>;

  /** Spawn `cmd` (default: the build under test) with `args`, in the repository root. */
  constructor(args: string[], cmd: string[] = serverCommand()) {
    const [bin, ...rest] = cmd;
    this.child = spawn(bin, [...rest, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
      cwd: ROOT,
    });
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (d: string) => this.stderr += d);
    this.exited = new Promise((resolve) => {
      this.child.on("exit", (code, signal) => resolve({ code, signal }));
    });
  }

  /** Start a server and wait for its `listening on` line. */
  static async start(args: string[], cmd?: string[]): Promise<WsServer> {
    const s = new WsServer(args, cmd);
    let exited = false;
    s.exited.then(() => exited = true);
    await eventually(
      () => exited || /listening on ws:\/\/\S+\n/.test(s.stderr),
      20_000,
      "the listening line",
    );
    const m = /^exec-server: listening on (ws:\/\/\S+)$/m.exec(s.stderr);
    if (!m) throw new Error(`server did not start:\n${s.stderr}`);
    s.url = m[1];
    return s;
  }

  /** The generated token printed on stderr, if any. */
  get generatedToken(): string | undefined {
    return /^exec-server: auth token: (\S+)$/m.exec(this.stderr)?.[1];
  }

  /** SIGTERM the server and wait for it to exit. */
  async stop(): Promise<{ code: number | null; signal: string | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      // Deno's ChildProcess.kill() reports the signal as the exit cause even
      // when the child handles it and exits 0; process.kill() does not.
      process.kill(this.child.pid!, "SIGTERM");
    }
    return await exitedOrKilled(this.child, this.exited);
  }
}
