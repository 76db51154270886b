/**
 * A pipe or socket descriptor (the server's stdin) read by the event loop
 * itself, straight into buffers its consumer chooses.
 *
 * Under Deno, `Deno.stdin` reads on a blocking thread: every request that
 * arrives crosses from that thread to the event loop, which cost a PTY
 * keystroke's round trip ~0.08 ms here (echo 1.2–1.5× the upstream
 * server's; measured in docs/performance.md). A `node:net` socket on the
 * same descriptor is non-blocking and polled on the main thread, as Node
 * and the upstream server read theirs.
 *
 * The socket's `onread` asks for the buffer of each read just before it
 * (and, in both runtimes, right after the previous read was handed over),
 * so a consumer that knows where the next bytes belong, such as the rest of
 * a binary frame's payload, gets them there without a copy. A stream of
 * chunks could not: each chunk was copied out of the read buffer, then
 * again into the payload, and the copies were a quarter of a 1 GiB
 * upload's server time, and half its garbage.
 *
 * @module
 */
import { fstatSync } from "node:fs";
import net from "node:net";

/**
 * Whether `fd` is a pipe or a socket: what an ssh session, a parent process
 * or a socket activator gives the server. Terminals and files are not.
 */
export function isPipeOrSocket(fd: number): boolean {
  try {
    const st = fstatSync(fd);
    return st.isFIFO() || st.isSocket();
  } catch {
    return false;
  }
}

/** Where the bytes read from a descriptor go. */
export interface ReadSink {
  /**
   * The buffer that the next read fills, from its start. Asked once before
   * every read (perhaps long before it, while reading is paused), so the
   * answer must stay valid until {@linkcode ReadSink.filled} is called.
   */
  target(): Uint8Array;
  /**
   * `bytes` were read into the start of the last {@linkcode ReadSink.target}.
   * Returns whether to go on reading; after false, reading waits for
   * {@linkcode FdReading.resume}.
   */
  filled(bytes: number): boolean;
  /** The input ended (`err` undefined) or failed. Called once. */
  end(err?: Error): void;
}

/** A descriptor being read into a {@linkcode ReadSink}. */
export interface FdReading {
  /** Read again after the sink asked to pause. */
  resume(): void;
  /** Stop reading and close the descriptor. */
  close(): void;
}

/** Starts reading into a sink: how a connection takes an input that {@linkcode readFd} serves. */
export type FdInput = (sink: ReadSink) => FdReading;

/**
 * Read `fd`, a pipe or a socket, into `sink` until the end. The descriptor
 * is switched to non-blocking mode (as Node does with a piped stdin).
 *
 * @example
 * ```ts
 * import { isPipeOrSocket, readFd } from "./fd_reader.ts";
 * if (isPipeOrSocket(0)) {
 *   const buffer = new Uint8Array(64 * 1024);
 *   let total = 0;
 *   readFd(0, {
 *     target: () => buffer,
 *     filled: (bytes) => (total += bytes, true),
 *     end: () => console.error(`read ${total} bytes`),
 *   });
 * }
 * ```
 */
export function readFd(fd: number, sink: ReadSink): FdReading {
  let ended = false;
  const end = (err?: Error): void => {
    if (ended) return;
    ended = true;
    sink.end(err);
  };
  // False from the callback stops reading (both runtimes) until resume().
  const onread = {
    buffer: (): Uint8Array => sink.target(),
    callback: (bytes: number): boolean => sink.filled(bytes),
  };
  const socket = new net.Socket(
    { fd, readable: true, writable: false, onread } as net.SocketConstructorOpts,
  );
  socket.on("end", () => end());
  socket.on("close", () => end());
  socket.on("error", (err) => end(err));
  return {
    resume: () => socket.resume(),
    close: (): void => {
      ended = true;
      socket.destroy();
    },
  };
}
