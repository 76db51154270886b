/**
 * An execution environment: processes and files, on this machine or on a
 * connected server, behind one interface, so the same code runs in either.
 *
 * @module
 */
import { LocalFileSystem, type LocalFileSystemOptions } from "../fs/local.ts";
import type { FileSystem } from "../fs/types.ts";
import type { ExecServerClient } from "./client.ts";
import { LocalProcesses, type LocalProcessesOptions } from "./local_process.ts";
import type { ExecProcess, SpawnedProcess } from "./process_handle.ts";
import type { RunOptions, RunResult } from "./process_handle.ts";
import { runProcess } from "./run.ts";
import { sandboxedFileSystem } from "./sandboxed_fs.ts";
import type { SandboxOptions, SpawnOptions } from "./spawn_options.ts";

/** Options of {@linkcode Environment.local}. */
export interface LocalEnvironmentOptions extends LocalProcessesOptions, LocalFileSystemOptions {}

/** Options of {@linkcode Environment.remote}. */
export interface RemoteEnvironmentOptions {
  /**
   * The sandbox of processes started without a `sandbox` option (default
   * none). Needs bubblewrap on the server's host.
   */
  sandbox?: SandboxOptions | null;
  /**
   * Put file operations (`fs`) under `sandbox` too (default false): the
   * server refuses, with `EACCES`, every path the sandbox does not allow.
   */
  sandboxFiles?: boolean;
}

/**
 * Processes (`process`) and files (`fs`) of one machine. Local and remote
 * environments behave identically: same handles, same defaults (cwd `/`,
 * env `{PATH: "/usr/local/bin:/usr/bin:/bin"}`), same error classes with
 * the same `errno`s.
 *
 * @example
 * ```ts
 * import { Environment, ExecServerClient } from "../../mod.ts";
 * async function build(env: Environment): Promise<string> {
 *   await env.fs.writeFile("/tmp/main.c", new TextEncoder().encode("int main(){return 0;}"));
 *   const r = await env.process.run(["cc", "-o", "/tmp/main", "/tmp/main.c"]);
 *   return r.stderr;
 * }
 * await build(Environment.local());
 * const client = await ExecServerClient.connectSsh("me@build-box");
 * await build(Environment.remote(client));
 * ```
 */
export class Environment {
  /** Start processes. */
  readonly process: ExecProcess;
  /** Read and write files. */
  readonly fs: FileSystem;
  /** Where it runs. */
  readonly kind: "local" | "remote";
  #close: () => Promise<void>;

  private constructor(
    kind: "local" | "remote",
    process: ExecProcess,
    fs: FileSystem,
    close: () => Promise<void>,
  ) {
    this.kind = kind;
    this.process = process;
    this.fs = fs;
    this.#close = close;
  }

  /** This machine, without a server: processes are started directly. */
  static local(options: LocalEnvironmentOptions = {}): Environment {
    const processes = new LocalProcesses(options);
    return new Environment(
      "local",
      processes,
      new LocalFileSystem({ maxReadFileBytes: options.maxReadFileBytes }),
      () => processes.close(),
    );
  }

  /**
   * The host `client` is connected to. Closing the environment kills the
   * processes it started but leaves the client open: whoever connected it
   * closes it.
   */
  static remote(client: ExecServerClient, options: RemoteEnvironmentOptions = {}): Environment {
    const processes = new TrackedProcesses(client, options.sandbox);
    const fs = options.sandboxFiles && options.sandbox
      ? sandboxedFileSystem(client, options.sandbox)
      : client.fs;
    return new Environment("remote", processes, fs, () => processes.close());
  }

  /** Kill the process trees this environment started that still run. */
  close(): Promise<void> {
    return this.#close();
  }
}

/** Remembers the running processes started through it, to kill them on close. */
class TrackedProcesses implements ExecProcess {
  #inner: ExecProcess;
  #sandbox: SandboxOptions | null | undefined;
  #live = new Set<SpawnedProcess>();

  constructor(inner: ExecProcess, sandbox?: SandboxOptions | null) {
    this.#inner = inner;
    this.#sandbox = sandbox;
  }

  async spawn(options: SpawnOptions): Promise<SpawnedProcess> {
    const p = await this.#inner.spawn(
      options.sandbox === undefined && this.#sandbox
        ? { ...options, sandbox: this.#sandbox }
        : options,
    );
    this.#live.add(p);
    p.wait().finally(() => this.#live.delete(p)).catch(() => {});
    return p;
  }

  run(command: string[] | SpawnOptions, options?: RunOptions): Promise<RunResult> {
    return runProcess(this, command, options);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#live].map(async (p) => {
      await p.terminate().catch(() => false);
      await p.wait().catch(() => undefined);
    }));
  }
}
