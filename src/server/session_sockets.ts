/**
 * The holder's side of session links (session_relay.ts): one listening
 * socket per session in the user's private session directory, made when
 * the session opens and removed when it ends, so that a later server of
 * the same user, started by a new ssh, can reach a session that outlived
 * the connection it was opened on. A link that presents the directory's
 * secret and this server's version is served as an ordinary connection.
 *
 * @module
 */
import { chmod, lstat, readdir, unlink } from "node:fs/promises";
import type { FrameConnection, IncomingFrame, OutgoingFrame } from "../rpc/connection.ts";
import {
  connectUnix,
  listenUnix,
  type UnixListener,
  type UnixStream,
} from "../runtime/unix_socket.ts";
import { StdioConnection } from "../transport/stdio.ts";
import { within } from "../util/deadline.ts";
import { VERSION } from "../version.ts";
import type { Logger } from "./logger.ts";
import type { ResumableSession, SessionHost } from "./resumable.ts";
import { preparePrivateDir, sameSecret, sessionSecret, sessionSocketPath } from "./session_dir.ts";
import { LINK_MAX_MESSAGE_BYTES, linkAnswer, parseLink, refusedFrame } from "./session_relay.ts";

/** A socket nobody answers on is stale once this old (a younger one may be starting up). */
const STALE_SOCKET_MS = 10_000;

/** How long a link may take to present its hello. */
const HELLO_TIMEOUT_MS = 10_000;

/** What {@linkcode SessionSockets} needs of its server. */
export interface SessionSocketsOptions {
  /** The private session directory. */
  dir: string;
  /** Serve an accepted link until it ends. */
  serve: (conn: FrameConnection) => Promise<void>;
  /** Output queue size above which a link's producers pause. */
  highWaterBytes?: number;
  /** Where problems go. */
  logger: Logger;
}

/** See the module documentation. */
export class SessionSockets implements SessionHost {
  #opts: SessionSocketsOptions;
  #ready: Promise<string | undefined> | undefined;
  #listeners = new Map<string, Promise<{ path: string; listener: UnixListener } | undefined>>();

  /** @param opts the directory and the server */
  constructor(opts: SessionSocketsOptions) {
    this.#opts = opts;
  }

  opened(session: ResumableSession): void {
    this.#listeners.set(session.id, this.#listen(session.id));
  }

  ended(session: ResumableSession): void {
    const listening = this.#listeners.get(session.id);
    this.#listeners.delete(session.id);
    void listening?.then(async (held) => {
      if (!held) return;
      held.listener.close();
      await unlink(held.path).catch(() => {});
    });
  }

  /** Whether the directory is usable (made private on first use). */
  async reachable(): Promise<boolean> {
    return (await this.#secret()) !== undefined;
  }

  /** The directory's secret, once it is known to be private; undefined when it is not. */
  #secret(): Promise<string | undefined> {
    this.#ready ??= (async () => {
      try {
        await preparePrivateDir(this.#opts.dir);
        const secret = await sessionSecret(this.#opts.dir);
        void this.#sweep();
        return secret;
      } catch (err) {
        this.#opts.logger.warn(
          `sessions cannot be reached from other servers: ${(err as Error).message}`,
        );
        return undefined;
      }
    })();
    return this.#ready;
  }

  /**
   * Remove the sockets of servers that died holding sessions (SIGKILL, a
   * crash): nothing answers on them. A young one may be a server's that is
   * just starting to listen, and is left.
   */
  async #sweep(): Promise<void> {
    const names = await readdir(this.#opts.dir).catch(() => [] as string[]);
    for (const name of names.filter((n) => /^s-[0-9a-f]{32}\.sock$/.test(n))) {
      const path = `${this.#opts.dir}/${name}`;
      try {
        const st = await lstat(path);
        if (Date.now() - st.mtimeMs < STALE_SOCKET_MS) continue;
        (await connectUnix(path)).destroy();
      } catch {
        await unlink(path).catch(() => {});
      }
    }
  }

  async #listen(id: string): Promise<{ path: string; listener: UnixListener } | undefined> {
    const secret = await this.#secret();
    if (secret === undefined) return undefined;
    const path = await sessionSocketPath(this.#opts.dir, id);
    // A socket left by a server that died is stale: ids are never reused.
    await unlink(path).catch(() => {});
    try {
      const listener = await listenUnix(path, (stream) => void this.#accept(stream, secret));
      // The directory already keeps others out; the socket says so too.
      await chmod(path, 0o600);
      return { path, listener };
    } catch (err) {
      this.#opts.logger.warn(`cannot listen for session ${id} on ${path}: ${err}`);
      return undefined;
    }
  }

  async #accept(stream: UnixStream, secret: string): Promise<void> {
    const conn = new StdioConnection(stream.readable, stream.writable, {
      maxMessageBytes: LINK_MAX_MESSAGE_BYTES,
      highWaterBytes: this.#opts.highWaterBytes,
      // A socket's writes resolve once the bytes were handed on, in both runtimes.
      reuseWriteBuffer: true,
    });
    const frames = conn.frames()[Symbol.asyncIterator]();
    const first = await within(frames.next(), HELLO_TIMEOUT_MS);
    const hello = first && !first.done && first.value.kind === "text"
      ? parseLink(first.value.text)
      : undefined;
    const problem = helloProblem(hello, secret);
    if (problem !== undefined) {
      this.#opts.logger.warn(`refused a session link: ${problem}`);
      conn.send(linkAnswer(problem));
      await conn.close().catch(() => {});
      stream.destroy();
      return;
    }
    conn.send(linkAnswer());
    await this.#opts.serve(new HandedOnConnection(conn, frames));
    stream.destroy();
  }
}

/** What is wrong with a link's hello, or undefined when nothing is. */
function helloProblem(
  hello: Record<string, unknown> | undefined,
  secret: string,
): string | undefined {
  if (!hello) return "it did not begin with a link hello";
  if (typeof hello.secret !== "string" || !sameSecret(hello.secret, secret)) {
    return "it did not present this user's session secret";
  }
  if (hello.version !== VERSION) {
    return `the session is held by exec-server ${VERSION}, and this is ${String(hello.version)}: ` +
      `resume it with the same version`;
  }
  return undefined;
}

/** A connection whose first frames were read already: the rest of `frames` is its input. */
class HandedOnConnection implements FrameConnection {
  readonly binaryFrames = true;
  #conn: StdioConnection;
  #frames: AsyncIterator<IncomingFrame>;

  constructor(conn: StdioConnection, frames: AsyncIterator<IncomingFrame>) {
    this.#conn = conn;
    this.#frames = frames;
  }

  frames(): AsyncIterable<IncomingFrame> {
    const frames = this.#frames;
    return {
      [Symbol.asyncIterator]: () => ({
        // The relay tells of frames its own transport refused.
        next: async () => {
          const next = await frames.next();
          if (next.done || next.value.kind !== "text") return next;
          const refused = refusedFrame(next.value.text);
          return refused ? { done: false, value: refused } : next;
        },
      }),
    };
  }

  send(frame: OutgoingFrame): boolean {
    return this.#conn.send(frame);
  }

  onDrain(listener: () => void): void {
    this.#conn.onDrain(listener);
  }

  close(): Promise<void> {
    return this.#conn.close();
  }
}
