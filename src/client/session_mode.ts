/**
 * Session mode (**[ext]**): the client opens or joins a resumable session
 * on the server, so that its processes can outlive a connection. Here: the
 * `initialize` params that ask for one, the wrapping that reconnects after
 * a drop, and attaching a handle to a process another connection started,
 * with its output replayed from a seq, none lost and none repeated.
 *
 * @module
 */
import type { SessionRequest } from "../protocol/sessions.ts";
import type { ProcessReadResult } from "../protocol/methods.ts";
import { decodeBase64 } from "../protocol/base64.ts";
import { ResumingConnection } from "./connect/resuming.ts";
import type { OpenedConnection } from "./connect/opened.ts";
import type { ClientOptions, SessionOptions } from "./options.ts";
import type { OutputChunk, ProcessExit, ProcessSink } from "./process_handle.ts";
import { createProcessHandle, type SpawnedProcess } from "./process_handle.ts";
import { Requests } from "../protocol/descriptors.ts";
import type { FrameConnection } from "../rpc/connection.ts";
import type { NotificationHub } from "./notification_hub.ts";
import type { ProtocolCalls } from "./protocol_calls.ts";
import { remoteProcessOps } from "./remote_ops.ts";

/** Whether `opts` ask for session mode. */
export function sessionMode(opts: ClientOptions & SessionOptions): boolean {
  return opts.resume === true || opts.sessionId !== undefined;
}

/** `initialize.params.session` for `opts`, or undefined outside session mode. */
export function sessionRequest(opts: ClientOptions & SessionOptions): SessionRequest | undefined {
  if (!sessionMode(opts)) return undefined;
  return opts.sessionId === undefined ? {} : { resume: opts.sessionId };
}

/** In session mode: how long `close()` lets ssh pass on the last bytes before stopping it. */
const SESSION_SSH_CLOSE_MS = 300;

/**
 * `opts` for the ssh child: in session mode, `close()` does not wait for
 * ssh to exit, since a server keeping a session outlives its stdin (and
 * sshd waits for its command to exit).
 */
export function sshSessionOptions<T extends ClientOptions & SessionOptions>(opts: T): T {
  return sessionMode(opts) ? { ...opts, closeTimeoutMs: SESSION_SSH_CLOSE_MS } : opts;
}

/**
 * `opened`, or with `resume: true` a connection that reopens the transport
 * with `reopen` and resumes the session whenever it drops.
 */
export function withResume(
  opened: OpenedConnection,
  reopen: () => Promise<OpenedConnection>,
  opts: ClientOptions & SessionOptions,
  clientName: string,
): OpenedConnection {
  if (opts.resume !== true) return opened;
  const conn = new ResumingConnection(opened, {
    open: reopen,
    clientName,
    reconnectWithinMs: opts.reconnectWithinMs,
    onProblem: opts.onProblem,
  });
  return {
    connection: conn,
    lifetime: { target: opened.lifetime.target, dispose: () => conn.dispose() },
  };
}

/**
 * A sink in front of an attached handle's: live notes wait while what the
 * process printed before is read back, then only chunks after the last
 * one handed on pass, so the handle sees every seq once, in order.
 */
export class ReplayGate {
  #inner: ProcessSink;
  #held: (["output", OutputChunk] | ["exited", ProcessExit])[] | undefined = [];
  #lastSeq: number;
  #done = false;

  /** @param inner the handle's sink; @param afterSeq the seq it has already */
  constructor(inner: ProcessSink, afterSeq: number) {
    this.#inner = inner;
    this.#lastSeq = afterSeq;
  }

  /** The seq of the last chunk handed on. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** What the hub delivers: live notes. */
  readonly sink: ProcessSink = {
    output: (chunk) => {
      if (this.#held) this.#held.push(["output", chunk]);
      else this.#pass(chunk);
    },
    exited: (exit) => {
      if (this.#held) this.#held.push(["exited", exit]);
      else this.#exit(exit);
    },
    failed: (error) => {
      this.#done = true;
      this.#inner.failed(error);
    },
  };

  /**
   * Hand on one `process/read` result.
   *
   * @returns whether reading is over: the exit was read, or nothing new came
   */
  replayed(read: ProcessReadResult): boolean {
    let fresh = 0;
    for (const c of read.chunks) {
      if (c.seq <= this.#lastSeq) continue;
      fresh++;
      this.#pass({ stream: c.stream, data: decodeBase64(c.chunk), seq: c.seq });
    }
    if (read.exited) {
      this.#held = undefined;
      this.#exit({
        exitCode: read.exitCode ?? 0,
        signal: read.signal ?? null,
        durationMs: read.durationMs ?? 0,
        ...(read.sandboxDenied === undefined ? {} : { sandboxDenied: read.sandboxDenied }),
      });
      return true;
    }
    return fresh === 0;
  }

  /** Caught up: what was held goes on, repeats dropped. */
  open(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const [kind, value] of held) {
      if (kind === "output") this.#pass(value);
      else this.#exit(value);
    }
  }

  #pass(chunk: OutputChunk): void {
    if (this.#done || chunk.seq <= this.#lastSeq) return;
    this.#lastSeq = chunk.seq;
    this.#inner.output(chunk);
  }

  #exit(exit: ProcessExit): void {
    if (this.#done) return;
    this.#done = true;
    this.#inner.exited(exit);
  }
}

/** What attaching needs of the client. */
export interface AttachParts {
  /** The client's calls. */
  calls: ProtocolCalls;
  /** Where its notifications go. */
  hub: NotificationHub;
  /** Its connection: a resuming one is told to follow the process too. */
  conn: FrameConnection;
}

/**
 * A handle on process `id` of the session, fed from `afterSeq` on: the
 * retained output read back first, then live output, each seq once.
 *
 * @throws {TypeError} when this client already has a handle on `id`
 * @throws {ServerError} when the session has no such process (-32600)
 */
export async function attachProcess(
  parts: AttachParts,
  id: string,
  afterSeq: number,
): Promise<SpawnedProcess> {
  const { calls, hub } = parts;
  if (hub.has(id)) throw new TypeError(`process ${id} already has a handle on this client`);
  const entry = (await calls.call(Requests.processList, {})).processes
    .find((p) => p.processId === id);
  // Reading it gets the server's own unknown-process error.
  if (!entry) await calls.call(Requests.processRead, { processId: id });
  const state = { exited: false };
  const ops = remoteProcessOps(calls, id, state);
  const { handle, sink } = createProcessHandle(id, entry?.argv ?? [], entry?.tty ?? false, ops);
  const gate = new ReplayGate(sink, afterSeq);
  hub.register(id, gate.sink, state);
  (parts.conn as Partial<ResumingConnection>).track?.(id, afterSeq);
  try {
    while (true) {
      const read = await calls.call(Requests.processRead, {
        processId: id,
        afterSeq: gate.lastSeq,
      });
      if (!gate.replayed(read)) continue;
      if (read.exited) {
        state.exited = true;
        hub.unregister(id, gate.sink);
      } else {
        gate.open();
      }
      return handle;
    }
  } catch (err) {
    hub.unregister(id, gate.sink);
    throw err;
  }
}
