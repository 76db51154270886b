/**
 * What a spawn asks for and what it gets by default, checked with the
 * server's own rules, for remote and local processes alike.
 *
 * @module
 */
import { RpcError } from "../protocol/errors.ts";
import type { RestrictedSandboxParams, TerminalSize } from "../protocol/methods.ts";
import type { SandboxPolicy } from "../protocol/sandbox_policy.ts";
import { checkStartParams, checkTerminalSize } from "../protocol/spawn_rules.ts";

/** The `PATH` a process gets when neither the call nor the owner names an environment. */
export const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The environment a process gets when none is given: only a `PATH`.
 * Nothing is inherited from the client, because the client's environment
 * means nothing on a remote host.
 */
export const DEFAULT_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: DEFAULT_PATH,
});

/** The working directory a process gets when none is given. */
export const DEFAULT_CWD = "/";

/** What to start. Only `argv` is required. */
export interface SpawnOptions {
  /** Program and arguments; `argv[0]` is looked up in `env.PATH`. */
  argv: string[];
  /** Absolute working directory (default: the owner's default, usually `/`). */
  cwd?: string;
  /**
   * The child's entire environment (default: the owner's default, usually
   * `{PATH: "/usr/local/bin:/usr/bin:/bin"}`). Nothing is inherited.
   */
  env?: Record<string, string>;
  /** Run on a pseudo-terminal: one output stream, `"pty"` (default false). */
  tty?: boolean;
  /** Keep stdin of a pipe process open for `SpawnedProcess.write` (default false). */
  pipeStdin?: boolean;
  /** Initial terminal size of a tty process (default 24x80). */
  size?: TerminalSize;
  /** The `argv[0]` the child sees, when it differs from the program (pipes only). */
  arg0?: string | null;
  /** The id to use instead of a generated one; must be unique on the connection. */
  processId?: string;
  /**
   * Run inside a sandbox (bubblewrap, Linux): what the process may read and
   * write and whether it reaches the network. Absent: the owner's default
   * (usually none); `null`: none even when the owner has a default.
   */
  sandbox?: SandboxOptions | null;
  /**
   * **[ext]** A client in session mode only: how long the process may keep
   * running while no connection is attached to the session, in ms (default:
   * the server's `--session-grace-ms`). Then its whole tree is killed.
   */
  ttlMs?: number;
}

/**
 * A sandbox in a script writer's terms: absolute paths (or `file://` URIs).
 * A path not listed is neither readable nor writable; the narrowest listed
 * path containing a file decides for it.
 *
 * @example
 * ```ts
 * import type { SandboxOptions } from "./spawn_options.ts";
 * // Read the machine, write only the workspace and /tmp, no network:
 * const sandbox: SandboxOptions = { write: ["/srv/app", "/tmp"], network: false };
 * ```
 */
export interface SandboxOptions {
  /** Readable (and runnable) paths (default `["/"]`, the whole machine). */
  read?: string[];
  /** Writable paths, readable too (default none). */
  write?: string[];
  /** Neither readable nor writable, even inside a listed path (e.g. a secrets directory). */
  deny?: string[];
  /** Reach the network (default false: only a private loopback). */
  network?: boolean;
}

/** Defaults an owner (client or local environment) fills in. */
export interface SpawnDefaults {
  /** Used when {@linkcode SpawnOptions.cwd} is absent. */
  cwd: string;
  /** Used when {@linkcode SpawnOptions.env} is absent. */
  env: Readonly<Record<string, string>>;
  /** Used when {@linkcode SpawnOptions.sandbox} is absent. */
  sandbox?: SandboxOptions | null;
}

/** {@linkcode SpawnOptions} with every default applied and every field checked. */
export interface ResolvedSpawnOptions {
  /** Program and arguments. */
  argv: string[];
  /** Absolute working directory. */
  cwd: string;
  /** The entire environment. */
  env: Record<string, string>;
  /** PTY or pipes. */
  tty: boolean;
  /** Whether stdin stays open. */
  pipeStdin: boolean;
  /** Initial terminal size, when given. */
  size: TerminalSize | undefined;
  /** The `argv[0]` override, or null. */
  arg0: string | null;
  /** The sandbox as sent on the wire, or null for none. */
  sandbox: RestrictedSandboxParams | null;
  /** The permission set it stands for, or null. */
  sandboxPolicy: SandboxPolicy | null;
  /** The time to live with nobody attached, when given. */
  ttlMs: number | undefined;
}

/**
 * Apply defaults and check the options with the server's own rules
 * (protocol/spawn_rules.ts), so bad input fails identically for local and
 * remote processes (a `TypeError` with the server's message) before
 * anything is started.
 *
 * @throws {TypeError} for an empty argv, a relative cwd, a bad env entry,
 * size or sandbox path
 */
export function resolveSpawnOptions(
  opts: SpawnOptions,
  defaults: SpawnDefaults,
): ResolvedSpawnOptions {
  const env = { ...(opts.env ?? defaults.env) };
  const chosen = opts.sandbox === undefined ? defaults.sandbox : opts.sandbox;
  const sandbox: RestrictedSandboxParams | null = chosen ? { ...chosen, mode: "restricted" } : null;
  const p = asTypeError(() =>
    checkStartParams({
      processId: "-",
      argv: opts.argv,
      cwd: opts.cwd ?? defaults.cwd,
      env,
      tty: opts.tty ?? false,
      arg0: opts.arg0,
      pipeStdin: opts.pipeStdin,
      size: opts.size,
      sandbox,
    })
  );
  return {
    argv: [...p.argv],
    cwd: p.cwd,
    env,
    tty: p.tty,
    pipeStdin: p.pipeStdin ?? false,
    size: p.size,
    arg0: p.arg0 ?? null,
    sandbox,
    sandboxPolicy: p.sandbox ?? null,
    ttlMs: checkTtl(opts.ttlMs),
  };
}

/** A `ttlMs` as given: a positive whole number of ms. */
function checkTtl(ttlMs: number | undefined): number | undefined {
  if (ttlMs === undefined) return undefined;
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new TypeError(`ttlMs must be a positive integer of milliseconds, got ${ttlMs}`);
  }
  return ttlMs;
}

/**
 * Check a terminal size: whole numbers from 1 to 65535.
 *
 * @throws {TypeError} naming the bad dimension
 */
export function checkSize(size: TerminalSize): void {
  asTypeError(() => checkTerminalSize(size, "size."));
}

/** Run a protocol rule; its violation becomes a `TypeError` with the same message. */
function asTypeError<T>(rule: () => T): T {
  try {
    return rule();
  } catch (err) {
    if (err instanceof RpcError) throw new TypeError(err.message);
    throw err;
  }
}

/**
 * A generator of process ids that are unique per owner: a random prefix
 * (so two clients' ids never look alike in logs) and a counter.
 *
 * @example
 * ```ts
 * import { processIdGenerator } from "./spawn_options.ts";
 * const next = processIdGenerator();
 * next(); // e.g. "p3f9a1c-1"
 * ```
 */
export function processIdGenerator(): () => string {
  const bytes = new Uint8Array(3);
  crypto.getRandomValues(bytes);
  const prefix = `p${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  let n = 0;
  return () => `${prefix}-${++n}`;
}
