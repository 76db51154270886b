/**
 * Unix domain sockets as Web streams: a listener and a connector, Deno's
 * own where it runs (its sockets move bytes without Node's stream layer),
 * `node:net` under Node. Each stream's chunks belong to its reader.
 *
 * @module
 */
import { readableFromNode, writableFromNode } from "./node_streams.ts";

/** One connected socket. */
export interface UnixStream {
  /** What the other end writes. */
  readable: ReadableStream<Uint8Array>;
  /** What goes to the other end; closing it ends the socket. */
  writable: WritableStream<Uint8Array>;
  /** Drop the socket at once. */
  destroy(): void;
}

/** A listening socket. */
export interface UnixListener {
  /** Stop accepting (the socket file is left for the caller to remove). */
  close(): void;
}

interface DenoUnixConn {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
  close(): void;
}

interface DenoUnix {
  listen(opts: { transport: "unix"; path: string }): AsyncIterable<DenoUnixConn> & {
    close(): void;
  };
  connect(opts: { transport: "unix"; path: string }): Promise<DenoUnixConn>;
}

const deno = (globalThis as { Deno?: DenoUnix }).Deno;

function fromDeno(conn: DenoUnixConn): UnixStream {
  return {
    readable: conn.readable,
    writable: conn.writable,
    destroy: () => {
      try {
        conn.close();
      } catch {
        // Already closed.
      }
    },
  };
}

/**
 * Listen on `path` (which must not exist) and hand each connection to
 * `onConnection`.
 *
 * @throws {Error} with the system's code (EADDRINUSE, EACCES, ...) when it cannot
 */
export async function listenUnix(
  path: string,
  onConnection: (stream: UnixStream) => void,
): Promise<UnixListener> {
  if (deno) {
    const listener = deno.listen({ transport: "unix", path });
    void (async () => {
      try {
        for await (const conn of listener) onConnection(fromDeno(conn));
      } catch {
        // Closed.
      }
    })();
    return { close: () => listener.close() };
  }
  const net = await import("node:net");
  const server = net.createServer((socket) => {
    onConnection({
      readable: readableFromNode(socket),
      writable: writableFromNode(socket),
      destroy: () => socket.destroy(),
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return { close: () => server.close() };
}

/** A connected socket read by pulling, each read into one reused buffer. */
export interface UnixPullStream {
  /** The next bytes, or undefined at the end; valid until the next read. */
  read(): Promise<Uint8Array | undefined>;
  /** What goes to the other end; closing it ends the socket. */
  writable: WritableStream<Uint8Array>;
  /** Drop the socket at once. */
  destroy(): void;
}

/** Bytes read at once: a reused buffer, so reading makes nothing for the collector. */
const PULL_READ_BYTES = 256 * 1024;

/**
 * Connect to the socket at `path`.
 *
 * @throws {Error} with the system's code (ENOENT, ECONNREFUSED, EACCES, ...)
 */
export async function connectUnix(path: string): Promise<UnixPullStream> {
  if (deno) {
    const conn = fromDeno(await deno.connect({ transport: "unix", path }));
    const byob = conn.readable.getReader({ mode: "byob" });
    let buffer = new ArrayBuffer(PULL_READ_BYTES);
    const read = async () => {
      const { value, done } = await byob.read(new Uint8Array(buffer));
      if (done || !value) return undefined;
      buffer = value.buffer as ArrayBuffer;
      return value;
    };
    return { read, writable: conn.writable, destroy: conn.destroy };
  }
  return await connectNode(path);
}

/** Node: the socket's own reads into a reused buffer (`onread`), paused between pulls. */
async function connectNode(path: string): Promise<UnixPullStream> {
  const net = await import("node:net");
  let ready: Uint8Array | undefined;
  let ended = false;
  let wake: (() => void) | undefined;
  const socket = net.createConnection({
    path,
    onread: {
      buffer: new Uint8Array(PULL_READ_BYTES),
      callback: (bytes: number, buffer: Uint8Array) => {
        ready = buffer.subarray(0, bytes);
        wake?.();
        // Paused until the reader is done with the buffer and pulls again.
        return false;
      },
    },
  });
  const finish = () => {
    ended = true;
    wake?.();
  };
  socket.on("end", finish);
  socket.on("close", finish);
  socket.on("error", finish);
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve();
    });
  });
  const read = async (): Promise<Uint8Array | undefined> => {
    // The reader is done with the last chunk: the buffer may be filled again.
    if (ready === undefined && !ended) socket.resume();
    while (ready === undefined && !ended) await new Promise<void>((r) => wake = r);
    wake = undefined;
    const chunk = ready;
    ready = undefined;
    return chunk;
  };
  return { read, writable: writableFromNode(socket), destroy: () => socket.destroy() };
}
