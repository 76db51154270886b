/**
 * Node streams as Web streams, for the places that hold a Node stream (a
 * child process's pipes) and speak Web streams (every connection). Unlike
 * `Writable.toWeb`, whose writes resolve as soon as the chunk is queued,
 * a write here resolves once the stream took it; reading pauses the Node
 * stream whenever the Web side lags.
 *
 * @module
 */
import type { Readable, Writable } from "node:stream";

/** A Node readable as a Web stream of bytes, with backpressure. */
export function readableFromNode(stream: Readable): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      stream.on("data", (chunk: Uint8Array) => {
        if (done) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) stream.pause();
      });
      const finish = () => {
        if (done) return;
        done = true;
        controller.close();
      };
      stream.on("end", finish);
      stream.on("close", finish);
      stream.on("error", (err) => {
        if (done) return;
        done = true;
        controller.error(err);
      });
    },
    pull() {
      stream.resume();
    },
    cancel() {
      done = true;
      stream.destroy();
    },
  }, { highWaterMark: 16 });
}

/** A Node writable as a Web stream of bytes; each write resolves once handed to the OS. */
export function writableFromNode(stream: Writable): WritableStream<Uint8Array> {
  return new WritableStream<Uint8Array>({
    write(chunk) {
      return new Promise<void>((resolve, reject) => {
        stream.write(chunk, (err) => err ? reject(err) : resolve());
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        if (stream.writableFinished || stream.destroyed) return resolve();
        stream.once("close", () => resolve());
        stream.end(() => resolve());
      });
    },
    abort() {
      stream.destroy();
    },
  });
}
