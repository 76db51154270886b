/**
 * {@linkcode PipeChild} over `Deno.Command`, read with BYOB readers: each
 * output stream is read into one buffer for the child's whole life (4 KiB,
 * then a pooled 64 KiB one once a read fills it), so output that streams
 * through costs no allocation per read.
 *
 * @module
 */
import {
  type OutputIndex,
  type PipeChild,
  type PipeChildExit,
  type PipeChildOptions,
  type PipeChildReader,
  PipeSpawnError,
} from "./pipe_child_types.ts";
import { errnoOf } from "./errno.ts";

/** A pipe's capacity on Linux: one read takes whatever a pipe can hold. */
const READ_BUFFER_BYTES = 64 * 1024;
/**
 * The first read's buffer. Most commands print little and most stderr
 * streams stay empty, so a stream gets a full-size buffer only once a read
 * fills this one.
 */
const FIRST_READ_BYTES = 4 * 1024;

/**
 * Read buffers of finished children, for the next ones: a server running
 * hundreds of short commands would otherwise leave two dead 64 KiB buffers
 * per command for the collector (measured: +14 MiB of RSS over 300 spawns).
 */
const spareReadBuffers: ArrayBuffer[] = [];
const MAX_SPARE_READ_BUFFERS = 16;

/** The part of Deno's API used here; typed locally so Node builds type-check. */
interface DenoChild {
  pid: number;
  stdin: WritableStream<Uint8Array>;
  stdout: ReadableStream<Uint8Array>;
  stderr: ReadableStream<Uint8Array>;
  status: Promise<{ code: number; signal: string | null }>;
}
interface DenoCommandApi {
  Command: new (program: string, opts: Record<string, unknown>) => { spawn(): DenoChild };
}

/** Start a child with `Deno.Command` in a new session (`detached`: setsid). */
export function spawnDenoPipeChild(opts: PipeChildOptions): Promise<PipeChild> {
  const deno = (globalThis as unknown as { Deno: DenoCommandApi }).Deno;
  let child: DenoChild;
  try {
    child = new deno.Command(opts.argv[0], {
      args: opts.argv.slice(1),
      cwd: opts.cwd,
      env: opts.env,
      clearEnv: true,
      detached: true,
      stdin: opts.stdin ? "piped" : "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (err) {
    return Promise.reject(new PipeSpawnError(opts.argv[0], errnoOf(err) ?? "EIO", err));
  }
  return Promise.resolve(new DenoPipeChild(child, opts.stdin));
}

class DenoPipeChild implements PipeChild {
  readonly pid: number;
  readonly exited: Promise<PipeChildExit>;
  #child: DenoChild;
  #stdin: WritableStreamDefaultWriter<Uint8Array> | null;
  #stdinOpen: boolean;
  #readers: ReadableStreamBYOBReader[] = [];
  /** Set while paused: the read loops wait on it before their next read. */
  #resumed: { promise: Promise<void>; resolve(): void } | null = null;

  constructor(child: DenoChild, stdin: boolean) {
    this.#child = child;
    this.pid = child.pid;
    this.#stdin = stdin ? child.stdin.getWriter() : null;
    this.#stdinOpen = stdin;
    this.exited = child.status.then((s) => {
      this.#stdinOpen = false;
      return { code: s.signal ? null : s.code, signal: s.signal };
    });
  }

  read(reader: PipeChildReader): void {
    void this.#pump(this.#child.stdout, 0, reader);
    void this.#pump(this.#child.stderr, 1, reader);
  }

  async #pump(stream: ReadableStream<Uint8Array>, index: OutputIndex, to: PipeChildReader) {
    const r = stream.getReader({ mode: "byob" });
    this.#readers.push(r);
    let buf: Uint8Array | undefined = new Uint8Array(FIRST_READ_BYTES);
    try {
      while (true) {
        while (this.#resumed) await this.#resumed.promise;
        const { value, done }: ReadableStreamReadResult<Uint8Array> = await r.read(buf!);
        // The read transferred the buffer into `value`; take it back whole.
        buf = value ? new Uint8Array(value.buffer) : undefined;
        if (done || !value) break;
        to.onChunk(index, value);
        if (value.byteLength === buf!.length && buf!.length < READ_BUFFER_BYTES) {
          buf = new Uint8Array(spareReadBuffers.pop() ?? new ArrayBuffer(READ_BUFFER_BYTES));
        }
      }
    } catch {
      // A failed or cancelled read ends the stream like EOF does; its
      // buffer was transferred away and is not reused.
      buf = undefined;
    } finally {
      const spare = buf?.buffer;
      if (
        spare?.byteLength === READ_BUFFER_BYTES && spareReadBuffers.length < MAX_SPARE_READ_BUFFERS
      ) {
        spareReadBuffers.push(spare as ArrayBuffer);
      }
      to.onEnd(index);
    }
  }

  pause(): void {
    if (this.#resumed) return;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => resolve = r);
    this.#resumed = { promise, resolve };
  }

  resume(): void {
    const resumed = this.#resumed;
    this.#resumed = null;
    resumed?.resolve();
  }

  destroyOutputs(): void {
    this.resume();
    for (const r of this.#readers) r.cancel().catch(() => {});
  }

  get stdinOpen(): boolean {
    return this.#stdinOpen;
  }

  async write(data: Uint8Array): Promise<void> {
    try {
      await this.#stdin!.write(data);
    } catch (err) {
      // The child closed its end (EPIPE): later writes fail at once.
      this.#stdinOpen = false;
      throw err;
    }
  }

  async closeStdin(): Promise<void> {
    this.#stdinOpen = false;
    try {
      await this.#stdin!.close();
    } catch {
      // Already closed by the child's exit: EOF is what was asked for.
    }
  }
}
