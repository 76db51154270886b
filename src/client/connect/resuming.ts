/**
 * A connection that survives drops, for clients in session mode (v0 with
 * a resumable session, **[ext]**): when the transport ends without the client asking, it
 * opens a new one, resumes the server-side session with its id, reads what
 * every live process printed meanwhile from its last seen `seq`, and hands
 * it on as if nothing had happened. The client above sees one unbroken
 * stream of frames; only requests in flight at the drop fail (their answer
 * is lost with the connection, and whether they ran cannot be known).
 *
 * @module
 */
import {
  type FrameConnection,
  frameText,
  type IncomingFrame,
  type OutgoingFrame,
} from "../../rpc/connection.ts";
import { AsyncQueue } from "../../util/async_queue.ts";
import { deadline } from "../../util/deadline.ts";
import type { OpenedConnection } from "./opened.ts";

// deno-lint-ignore no-explicit-any
type Msg = Record<string, any>;

/** How a {@linkcode ResumingConnection} reconnects. */
export interface ResumeOptions {
  /** Open a new transport to the same server. */
  open: () => Promise<OpenedConnection>;
  /** The client's name for the resuming `initialize`. */
  clientName: string;
  /** Give up when no resume succeeded within this long, in ms (default 25 000). */
  reconnectWithinMs?: number;
  /** Told about reconnects and anything that could not be replayed. */
  onProblem?: (message: string) => void;
}

/** What the connection knows of one live process. */
interface Live {
  /** The last seq handed on. */
  seq: number;
  /** Live notifications held back while what was missed is replayed. */
  held: Msg[] | undefined;
}

const RETRY_MS = [50, 100, 250, 500, 1000];

/** The start of a request as the client's peer serializes it: its id and method. */
const REQUEST_HEAD = /^\{"id":(-?\d+|"(?:[^"\\]|\\.)*"),"method":"([^"\\]+)"/;

/** See the module documentation. */
export class ResumingConnection implements FrameConnection {
  #opts: ResumeOptions;
  #current: OpenedConnection;
  #out = new AsyncQueue<IncomingFrame>();
  #sessionId: string | undefined;
  #clientRequests = new Map<string, { method: string; processId?: string }>();
  #live = new Map<string, Live>();
  #own = new Map<string, (m: Msg) => void>();
  #ownIds = 0;
  #backlog: string[] = [];
  #down = false;
  #closing = false;
  #drainListeners: (() => void)[] = [];

  /** @param first the transport that is open now; @param opts how to get another */
  constructor(first: OpenedConnection, opts: ResumeOptions) {
    this.#opts = opts;
    this.#current = first;
    this.#pump(first);
  }

  /** The session's id, once the server answered `initialize`. */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  frames(): AsyncIterable<IncomingFrame> {
    return this.#out;
  }

  send(frame: OutgoingFrame): boolean {
    const text = frameText(frame);
    this.#noteOutgoing(text);
    if (this.#down) {
      this.#backlog.push(text);
      return true;
    }
    return this.#current.connection.send(text);
  }

  onDrain(listener: () => void): void {
    this.#drainListeners.push(listener);
    this.#current.connection.onDrain(listener);
  }

  async close(): Promise<void> {
    this.#closing = true;
    await this.#current.connection.close();
  }

  /**
   * Follow process `id` from `afterSeq` on, as if this connection had
   * started it: after a drop, what it printed meanwhile is read back.
   */
  track(id: string, afterSeq: number): void {
    if (!this.#live.has(id)) this.#live.set(id, { seq: afterSeq, held: undefined });
  }

  /** Release whatever carries the current transport. */
  async dispose(): Promise<void> {
    this.#closing = true;
    await this.#current.lifetime.dispose?.();
  }

  #noteOutgoing(text: string): void {
    // The client's peer writes requests as {"id":…,"method":"…",…}: the head
    // names them, so a large request (a file write) is not parsed again.
    const head = REQUEST_HEAD.exec(text.slice(0, 512));
    if (!head) return;
    const id = head[1].startsWith('"') ? JSON.parse(head[1]) as string : head[1];
    const method = head[2];
    let processId: string | undefined;
    if (method === "process/start") {
      try {
        processId = JSON.parse(text).params?.processId;
      } catch {
        // Not JSON after all: the server will say so.
      }
    }
    this.#clientRequests.set(String(id), { method, processId });
  }

  async #pump(opened: OpenedConnection): Promise<void> {
    try {
      for await (const frame of opened.connection.frames()) {
        if (frame.kind !== "text") this.#out.push(frame);
        else this.#incoming(frame);
      }
    } catch {
      // A failed transport ends like a closed one.
    }
    // A transport that failed while resuming is retried by the resume loop.
    if (opened !== this.#current || this.#down) return;
    if (this.#closing || this.#sessionId === undefined) this.#out.end();
    else void this.#reconnect();
  }

  #incoming(frame: { kind: "text"; text: string }): void {
    let m: Msg;
    try {
      m = JSON.parse(frame.text);
    } catch {
      this.#out.push(frame);
      return;
    }
    if (m.method === undefined && m.id !== undefined) {
      const own = this.#own.get(String(m.id));
      if (own) {
        this.#own.delete(String(m.id));
        own(m);
        return;
      }
      this.#answered(m);
    } else if (!this.#liveNote(m)) {
      return;
    } else {
      this.#ended(m);
    }
    this.#out.push(frame);
  }

  /** Track what a client request's answer means for the session. */
  #answered(m: Msg): void {
    const request = this.#clientRequests.get(String(m.id));
    this.#clientRequests.delete(String(m.id));
    if (!request || !m.result) return;
    if (request.method === "initialize" && typeof m.result.session?.id === "string") {
      this.#sessionId = m.result.session.id;
    } else if (request.method === "process/start" && request.processId !== undefined) {
      this.#live.set(request.processId, { seq: 0, held: undefined });
    }
  }

  /** Whether a notification is to be handed on now (not a repeat, not held back). */
  #liveNote(m: Msg): boolean {
    const id = m.params?.processId;
    const live = typeof id === "string" ? this.#live.get(id) : undefined;
    if (!live) return true;
    // The exit too (v0's has no seq): it must not overtake the replay.
    if (live.held) {
      live.held.push(m);
      return false;
    }
    if (typeof m.params.seq !== "number") return true;
    if (m.params.seq <= live.seq) return false;
    live.seq = m.params.seq;
    return true;
  }

  /** A live note that ends what is known of a process. */
  #ended(m: Msg): void {
    if (m.method === "process/exited" && typeof m.params?.processId === "string") {
      this.#live.delete(m.params.processId);
    }
  }

  #inject(m: Msg): void {
    this.#out.push({ kind: "text", text: JSON.stringify(m) });
  }

  async #reconnect(): Promise<void> {
    this.#down = true;
    // Their answers were lost with the connection.
    for (const [id, request] of this.#clientRequests) {
      this.#inject({
        id: /^\d+$/.test(id) ? Number(id) : id,
        error: {
          code: -32603,
          message: `the connection dropped before ${request.method} was answered ` +
            `(it may or may not have run); the session was resumed`,
          data: { interrupted: true },
        },
      });
    }
    this.#clientRequests.clear();
    const until = Date.now() + (this.#opts.reconnectWithinMs ?? 25_000);
    for (let attempt = 0; Date.now() < until && !this.#closing; attempt++) {
      try {
        await this.#resume();
        return;
      } catch (err) {
        this.#opts.onProblem?.(`resuming session ${this.#sessionId} failed: ${err}`);
        await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]));
      }
    }
    this.#out.end();
  }

  async #resume(): Promise<void> {
    const opened = await this.#opts.open();
    this.#current = opened;
    for (const listener of this.#drainListeners) opened.connection.onDrain(listener);
    this.#pump(opened);
    const answer = await this.#request("initialize", {
      clientName: this.#opts.clientName,
      session: { resume: this.#sessionId },
    });
    if (answer.error || answer.result?.session?.id !== this.#sessionId) {
      await opened.lifetime.dispose?.();
      throw new Error(JSON.stringify(answer.error ?? answer.result));
    }
    opened.connection.send(JSON.stringify({ method: "initialized", params: {} }));
    this.#opts.onProblem?.(`resumed session ${this.#sessionId} after a dropped connection`);
    for (const live of this.#live.values()) live.held = [];
    this.#down = false;
    for (const text of this.#backlog.splice(0)) opened.connection.send(text);
    await Promise.all([...this.#live.keys()].map((id) => this.#replay(id)));
  }

  /** Hand on what `id` printed while no connection was there, then what was held. */
  async #replay(id: string): Promise<void> {
    const live = this.#live.get(id)!;
    try {
      while (true) {
        const r = await this.#request("process/read", { processId: id, afterSeq: live.seq });
        if (r.error) throw new Error(r.error.message);
        const read = r.result;
        let fresh = 0;
        for (const c of read.chunks) {
          if (c.seq <= live.seq) continue;
          live.seq = c.seq;
          fresh++;
          this.#inject({ method: "process/output", params: { processId: id, ...c } });
        }
        if (read.exited) {
          this.#inject({
            method: "process/exited",
            params: {
              processId: id,
              exitCode: read.exitCode,
              signal: read.signal ?? null,
              durationMs: read.durationMs,
              ...(read.sandboxDenied !== undefined ? { sandboxDenied: read.sandboxDenied } : {}),
            },
          });
          this.#live.delete(id);
          return;
        }
        // Caught up (or a server repeating itself): live notes take over.
        if (fresh === 0) break;
      }
    } catch (err) {
      this.#opts.onProblem?.(`could not replay the output of ${id}: ${err}`);
    }
    const held = live.held ?? [];
    live.held = undefined;
    for (const m of held) {
      if (!this.#liveNote(m)) continue;
      this.#ended(m);
      this.#inject(m);
    }
  }

  #request(method: string, params: unknown): Promise<Msg> {
    const id = `resume-${++this.#ownIds}`;
    const answer = new Promise<Msg>((resolve) => this.#own.set(id, resolve));
    this.#current.connection.send(JSON.stringify({ id, method, params }));
    return deadline(answer, 10_000, () => new Error(`${method} was not answered`));
  }
}
