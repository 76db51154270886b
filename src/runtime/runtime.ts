/**
 * The few places where Deno and Node differ, behind one small surface.
 * Nothing else in the tree looks at `globalThis.Deno`.
 *
 * @module
 */
import process from "node:process";
import { Readable } from "node:stream";
import { type FdInput, isPipeOrSocket, readFd, type ReadSink } from "./fd_reader.ts";
import { directPipeWriter } from "./direct_write.ts";
import { enlargePipe } from "./pipe_size.ts";

interface DenoLike {
  version: { deno: string };
  stdin: { readable: ReadableStream<Uint8Array> };
  stdout: { writable: WritableStream<Uint8Array> };
  addSignalListener(signal: string, handler: () => void): void;
  execPath(): string;
}

const deno: DenoLike | undefined = (globalThis as { Deno?: DenoLike }).Deno;

/** True when running under Deno. */
export const isDeno: boolean = deno !== undefined;

/**
 * Whether `node:fs` writes work on a descriptor this runtime did not open
 * itself (such as a PTY master from node-pty's addon). Node: yes. Deno
 * answers EBADF, so there a PTY is written through its stream instead.
 */
export const canWriteForeignFds: boolean = !isDeno;

/**
 * The runtime's name and version, e.g. `deno 2.9.6` or `node v20.20.2`.
 * A Node single-executable build says so.
 */
export function runtimeDescription(): string {
  if (deno) return `deno ${deno.version.deno}`;
  const sea = isSingleExecutable() ? " (single executable)" : "";
  return `node ${process.version}${sea}`;
}

/** True inside a Node single-executable application. */
export function isSingleExecutable(): boolean {
  if (deno) return false;
  try {
    // node:sea exists from Node 20; isSea() says whether we run as one.
    const sea = (globalThis as { __execServerSea?: { isSea(): boolean } })
      .__execServerSea;
    return sea?.isSea() ?? false;
  } catch {
    return false;
  }
}

/**
 * A pipe is worth enlarging once a read found it full: a default Linux pipe
 * holds 64 KiB. Under Node the call needs a native addon (pipe_size.ts),
 * which a server that only ever sees small messages never loads.
 */
const FULL_PIPE_BYTES = 64 * 1024;

/**
 * The server's standard input. A pipe or a socket is read by the event loop
 * into buffers its reader chooses (see fd_reader.ts), under Deno rather
 * than by `Deno.stdin`'s blocking thread; it is asked for a bigger buffer
 * where the runtime can (pipe_size.ts): at once under Deno, after the
 * first full read under Node. A terminal or a file is a Web stream of bytes.
 */
export function stdinInput(): ReadableStream<Uint8Array> | FdInput {
  if (isPipeOrSocket(0)) {
    if (deno) {
      enlargePipe(0);
      return (sink) => readFd(0, sink);
    }
    return (sink) => readFd(0, enlargeOnFullRead(sink));
  }
  if (!deno) return Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>;
  return deno.stdin.readable;
}

/**
 * Whether a write to {@linkcode stdoutWritable} resolves only once the bytes
 * were written out, so that the caller may reuse its buffer. True for both
 * runtimes: Deno's stdout stream works that way, and under Node the stream
 * below resolves from `process.stdout.write`'s callback.
 */
export const stdoutWriteCompletes: boolean = true;

/** `sink`, asking once for a bigger stdin pipe when a read fills 64 KiB. */
function enlargeOnFullRead(sink: ReadSink): ReadSink {
  let asked = false;
  return {
    target: () => sink.target(),
    filled(bytes): boolean {
      if (!asked && bytes >= FULL_PIPE_BYTES) {
        asked = true;
        enlargePipe(0);
      }
      return sink.filled(bytes);
    },
    end: (err) => sink.end(err),
  };
}

/**
 * The server's standard output as a Web stream of bytes. A pipe is asked
 * for a bigger buffer where the runtime can (pipe_size.ts): at once under
 * Deno, under Node the first time a write finds it full.
 */
export function stdoutWritable(): WritableStream<Uint8Array> {
  if (deno) {
    enlargePipe(1);
    return denoStdoutWritable(deno.stdout.writable);
  }
  let asked = false;
  // Not Writable.toWeb: its writes resolve as soon as the chunk is queued,
  // so a caller could not reuse its buffer; this resolves once written.
  return new WritableStream<Uint8Array>({
    write(chunk): Promise<void> {
      return new Promise((resolve, reject) => {
        process.stdout.write(chunk, (err) => err ? reject(err) : resolve());
        // Bytes left queued: the kernel's pipe took less than was written.
        if (!asked && process.stdout.writableLength > 0) {
          asked = true;
          enlargePipe(1);
        }
      });
    },
    close(): Promise<void> {
      return new Promise((resolve) => process.stdout.end(() => resolve()));
    },
  });
}

/**
 * Deno's stdout, with small messages written at once when the pipe has
 * room (direct_write.ts) and everything else through `writable`, in order:
 * a stream's writes never overlap, so nothing overtakes what is queued.
 */
function denoStdoutWritable(writable: WritableStream<Uint8Array>): WritableStream<Uint8Array> {
  const direct = directPipeWriter(1);
  if (!direct) return writable;
  const writer = writable.getWriter();
  return new WritableStream<Uint8Array>({
    async write(chunk): Promise<void> {
      const done = direct(chunk);
      if (done < chunk.byteLength) await writer.write(chunk.subarray(done));
    },
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
}

/** Run `handler` when the server process receives `signal`. */
export function onSignal(signal: "SIGTERM" | "SIGINT" | "SIGHUP", handler: () => void): void {
  if (deno) {
    deno.addSignalListener(signal, handler);
    return;
  }
  process.on(signal, handler);
}

/** The path of the running executable (the runtime, or the single binary). */
export function execPath(): string {
  return deno ? deno.execPath() : process.execPath;
}
