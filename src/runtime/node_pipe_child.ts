/**
 * {@linkcode PipeChild} over `node:child_process`: Node's way, and Deno's
 * for the rare start that needs a different `argv[0]`.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import {
  type OutputIndex,
  type PipeChild,
  type PipeChildExit,
  type PipeChildOptions,
  type PipeChildReader,
  PipeSpawnError,
} from "./pipe_child_types.ts";

/** Start a child with `node:child_process`, in a session of its own. */
export async function spawnNodePipeChild(opts: PipeChildOptions): Promise<PipeChild> {
  const child = spawn(opts.argv[0], opts.argv.slice(1), {
    cwd: opts.cwd,
    env: opts.env,
    argv0: opts.arg0 ?? opts.argv[0],
    detached: true,
    stdio: [opts.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    windowsHide: true,
  });
  const failure = await new Promise<(Error & { code?: string }) | undefined>((resolve) => {
    const onError = (err: Error & { code?: string }) => {
      child.off("spawn", onSpawn);
      resolve(err);
    };
    const onSpawn = () => {
      child.off("error", onError);
      resolve(undefined);
    };
    child.once("error", onError);
    child.once("spawn", onSpawn);
  });
  if (failure) throw new PipeSpawnError(opts.argv[0], failure.code ?? "EIO", failure);
  return new NodePipeChild(child, opts.stdin);
}

class NodePipeChild implements PipeChild {
  readonly pid: number;
  readonly exited: Promise<PipeChildExit>;
  #child: ChildProcess;
  #stdinOpen: boolean;
  #outputs: Readable[];

  constructor(child: ChildProcess, stdin: boolean) {
    this.#child = child;
    this.pid = child.pid!;
    this.#stdinOpen = stdin && child.stdin !== null;
    // A child that exits without reading leaves EPIPE on later writes;
    // that is the write's failure to report, not a crash.
    child.stdin?.on("error", () => {
      this.#stdinOpen = false;
    });
    this.#outputs = [child.stdout!, child.stderr!];
    this.exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        this.#stdinOpen = false;
        resolve({ code, signal });
      });
    });
  }

  read(reader: PipeChildReader): void {
    this.#outputs.forEach((stream, i) => {
      const index = i as OutputIndex;
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        reader.onEnd(index);
      };
      stream.on("data", (chunk: Uint8Array) => reader.onChunk(index, chunk));
      stream.on("end", end);
      stream.on("close", end);
      stream.on("error", end);
    });
  }

  pause(): void {
    for (const s of this.#outputs) s.pause();
  }

  resume(): void {
    for (const s of this.#outputs) s.resume();
  }

  destroyOutputs(): void {
    for (const s of this.#outputs) s.destroy();
  }

  get stdinOpen(): boolean {
    return this.#stdinOpen;
  }

  write(data: Uint8Array): Promise<void> {
    const stdin = this.#child.stdin!;
    return new Promise((resolve, reject) => {
      stdin.write(data, (err) => err ? reject(err) : resolve());
    });
  }

  closeStdin(): Promise<void> {
    const stdin = this.#child.stdin!;
    this.#stdinOpen = false;
    return new Promise((resolve) => stdin.end(() => resolve()));
  }
}
