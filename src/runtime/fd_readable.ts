/**
 * A pipe or socket descriptor (the server's stdin) as a Web stream of bytes,
 * read by the event loop itself.
 *
 * Under Deno, `Deno.stdin` reads on a blocking thread: every request that
 * arrives crosses from that thread to the event loop, which cost a PTY
 * keystroke's round trip ~0.08 ms here (echo 1.2–1.5× the upstream
 * server's; measured in docs/performance.md). A `node:net` socket on the
 * same descriptor is non-blocking and polled on the main thread, as Node
 * and the upstream server read theirs. It reads into one reused buffer
 * (`onread`) and hands out copies: the socket's default reads allocate a
 * fresh buffer each, which grew the server ~12 MiB more over a 1 GiB
 * upload.
 *
 * @module
 */
import { fstatSync } from "node:fs";
import net from "node:net";

/** Bytes read at once, and the size of the reused buffer. */
const READ_BYTES = 64 * 1024;

/**
 * Chunks queued before reading pauses: reads stop while the consumer lags,
 * so a client that writes faster than the server parses is held back by
 * the pipe, not buffered here.
 */
const QUEUED_CHUNKS = 16;

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

/**
 * Read `fd`, a pipe or a socket, as a byte stream; each chunk is the
 * caller's to keep. The descriptor is switched to non-blocking mode (as
 * Node does with a piped stdin).
 *
 * @example
 * ```ts
 * import { fdReadable, isPipeOrSocket } from "./fd_readable.ts";
 * if (isPipeOrSocket(0)) {
 *   const reader = fdReadable(0).getReader();
 *   const { value } = await reader.read();
 *   console.error(value?.byteLength);
 * }
 * ```
 */
export function fdReadable(fd: number): ReadableStream<Uint8Array> {
  const buffer = new Uint8Array(READ_BYTES);
  let socket: net.Socket | undefined;
  let ended = false;
  return new ReadableStream<Uint8Array>({
    start(controller): void {
      const onread = {
        buffer,
        callback(nread: number, buf: Uint8Array): boolean {
          controller.enqueue(buf.slice(0, nread));
          const more = (controller.desiredSize ?? 1) > 0;
          if (!more) socket!.pause();
          return more;
        },
      };
      socket = new net.Socket(
        { fd, readable: true, writable: false, onread } as net.SocketConstructorOpts,
      );
      const end = (err?: Error): void => {
        if (ended) return;
        ended = true;
        if (err) controller.error(err);
        else controller.close();
      };
      socket.on("end", () => end());
      socket.on("close", () => end());
      socket.on("error", (err) => end(err));
    },
    pull(): void {
      socket?.resume();
    },
    cancel(): void {
      ended = true;
      socket?.destroy();
    },
  }, { highWaterMark: QUEUED_CHUNKS });
}
