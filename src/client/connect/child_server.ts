/**
 * A server run as a child process and spoken to over its stdin/stdout:
 * a local `exec-server`, or `ssh host exec-server`. The client owns the
 * child: closing the client ends its stdin, waits, then kills it.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import type { FrameConnection } from "../../rpc/connection.ts";
import { StdioConnection } from "../../transport/stdio.ts";
import { readableFromNode, writableFromNode } from "../../runtime/node_streams.ts";
import { enlargeStreamPipe } from "../../runtime/pipe_size.ts";
import { within } from "../../util/deadline.ts";
import { ConnectError } from "../errors.ts";

/** What happens to the child's stderr. */
export type ChildStderr = "capture" | "inherit" | "ignore";

/** Options of a child-process server. */
export interface ChildServerOptions {
  /** The child's working directory (default: the current one). */
  cwd?: string;
  /** The child's environment (default: this process's environment). */
  env?: Record<string, string>;
  /**
   * `"capture"` (default) keeps the last 8 KiB of stderr and quotes it when
   * the server fails; `"inherit"` passes it through; `"ignore"` drops it.
   */
  stderr?: ChildStderr;
  /** How long to wait for the child to exit once its stdin is closed, in ms (default 5000). */
  closeTimeoutMs?: number;
  /** The largest accepted incoming message, in bytes (default 256 MiB). */
  maxMessageBytes?: number;
}

/** How a client ties its lifetime to whatever carries its connection. */
export interface ConnectionLifetime {
  /** A human-readable name of the peer, used in error messages. */
  target?: string;
  /** Explain why the connection ended by itself (e.g. the server's exit status). */
  explainEnd?(): Promise<string | undefined>;
  /** Release everything once the connection is over (e.g. kill the child). */
  dispose?(): Promise<void>;
}

const STDERR_TAIL_BYTES = 8 * 1024;

/** A started child-process server. */
export interface ChildServer {
  /** The connection over the child's stdio. */
  connection: FrameConnection;
  /** Ends the child with the client. */
  lifetime: ConnectionLifetime;
  /** The child's pid. */
  pid: number;
}

/**
 * Runs on a child's raw stdio before JSON-RPC starts (e.g. to upload the
 * server first). It must release any lock it takes on `stdin`, and returns
 * the stdout the connection reads from, including any bytes it read past
 * its own part. When it throws, the child is stopped.
 */
export type ChildPrelude = (io: {
  stdout: ReadableStream<Uint8Array>;
  stdin: WritableStream<Uint8Array>;
  explainEnd: () => Promise<string | undefined>;
}) => Promise<ReadableStream<Uint8Array>>;

/**
 * Start `command args` and connect to its stdio, after `prelude` when given.
 *
 * @throws {ConnectError} when the program cannot be started
 */
export async function startChildServer(
  command: string,
  args: string[],
  opts: ChildServerOptions = {},
  prelude?: ChildPrelude,
): Promise<ChildServer> {
  const target = [command, ...args].map(quoteForDisplay).join(" ");
  const stderrMode = opts.stderr ?? "capture";
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ["pipe", "pipe", stderrMode === "capture" ? "pipe" : stderrMode],
    windowsHide: true,
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error & { code?: string }) => {
      child.off("spawn", onSpawn);
      reject(new ConnectError(target, err.code ?? err.message, { cause: err }));
    };
    const onSpawn = () => {
      child.off("error", onError);
      resolve();
    };
    child.once("error", onError);
    child.once("spawn", onSpawn);
  });
  // Write failures after the child died surface as a closed connection.
  child.stdin!.on("error", () => {});
  child.on("error", () => {});
  let stderrTail = "";
  if (stderrMode === "capture") {
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (text: string) => {
      stderrTail = (stderrTail + text).slice(-STDERR_TAIL_BYTES);
    });
  }
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  // Bigger pipes where this runtime can ask, whatever the server can.
  enlargeStreamPipe(child.stdin);
  enlargeStreamPipe(child.stdout);
  let stdout = readableFromNode(child.stdout!);
  const stdin = writableFromNode(child.stdin!);
  const closeTimeoutMs = opts.closeTimeoutMs ?? 5000;
  const lifetime: ConnectionLifetime = {
    target,
    explainEnd: async () => {
      const status = await within(exited, Math.min(closeTimeoutMs, 2000));
      const how = status === undefined
        ? `${target} closed its output`
        : status.signal
        ? `${target} was killed by ${status.signal}`
        : `${target} exited with code ${status.code}`;
      const tail = stderrTail.trim();
      return tail ? `${how}; its stderr ends with:\n${tail}` : how;
    },
    dispose: () => stopChild(child, exited, closeTimeoutMs),
  };
  if (prelude) {
    try {
      stdout = await prelude({ stdout, stdin, explainEnd: lifetime.explainEnd! });
    } catch (err) {
      await lifetime.dispose!();
      throw err;
    }
  }
  const connection = new StdioConnection(stdout, stdin, {
    maxMessageBytes: opts.maxMessageBytes,
  });
  return { connection, lifetime, pid: child.pid! };
}

async function stopChild(
  child: ChildProcess,
  exited: Promise<unknown>,
  closeTimeoutMs: number,
): Promise<void> {
  child.stdin?.end();
  if (await within(exited, closeTimeoutMs) !== undefined) return;
  child.kill("SIGTERM");
  if (await within(exited, 2000) !== undefined) return;
  child.kill("SIGKILL");
  await exited;
}

function quoteForDisplay(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
