/**
 * **[ext]** Resumable sessions for exec-server.v0: a connection that asks
 * for one in `initialize` may leave its processes running when it ends
 * (each for its time to live), and a later connection, over any transport,
 * resumes the session with its id, lists its processes and reads them from
 * any seq. docs/protocol.md, "Sessions", is the contract; this module holds
 * its types and the checks of its params.
 *
 * @module
 */
import { invalidParams } from "./errors.ts";
import { show } from "./show.ts";

/** `initialize.params.session`: ask for a resumable session, new or resumed. */
export interface SessionRequest {
  /** The id of a session to resume; absent for a new one. */
  resume?: string;
}

/** `initialize.result.session`: the session this connection is attached to. */
export interface SessionInfo {
  /** The id to resume it with. Unguessable: it is the session's only credential. */
  id: string;
  /** Whether an existing session was resumed. */
  resumed: boolean;
  /** How long a process without its own `ttlMs` outlives the session's connection, in ms. */
  graceMs: number;
  /** The largest `ttlMs` a process may ask for, in ms. */
  maxTtlMs: number;
  /**
   * Whether a later server of the same user (a new `ssh host exec-server`)
   * can resume it, through the user's private session directory; false:
   * only through this server (its websocket, or this very connection).
   */
  fromOtherServers: boolean;
}

/** `process/list` params: none. */
export type ProcessListParams = Record<string, never> | undefined;

/** One process of the session, as `process/list` tells it. */
export interface ProcessListEntry {
  /** The client's id for it. */
  processId: string;
  /** Its command line. */
  argv: string[];
  /** Whether it runs on a terminal. */
  tty: boolean;
  /** `starting`, `running`, or `exited` (its exit has been reported). */
  state: "starting" | "running" | "exited";
  /** The exit code once exited, else null. */
  exitCode: number | null;
  /** The signal that ended it, or null. */
  signal: string | null;
  /** The oldest seq still retained for `process/read` (equal to `nextSeq` when none is). */
  firstSeq: number;
  /** The seq the next chunk will get. */
  nextSeq: number;
  /** Wall-clock start, ms since the epoch (null while starting). */
  startedAtMs: number | null;
  /** Wall-clock exit, ms since the epoch, once exited. */
  exitedAtMs: number | null;
  /** How long it may run with nobody attached, in ms; null for the session's grace window. */
  ttlMs: number | null;
}

/** `process/list` result. */
export interface ProcessListResult {
  /** Every process of the session, running or retained, oldest start first. */
  processes: ProcessListEntry[];
}

/**
 * Read `initialize.params.session`: undefined when the client did not ask
 * for a session.
 *
 * @example
 * ```ts
 * import { readSessionRequest } from "./sessions.ts";
 * readSessionRequest({ clientName: "x" }); // undefined
 * readSessionRequest({ clientName: "x", session: {} }); // {}
 * readSessionRequest({ clientName: "x", session: { resume: "a1b2" } }); // { resume: "a1b2" }
 * ```
 * @throws {RpcError} -32602 naming the bad member
 */
export function readSessionRequest(p: Record<string, unknown>): SessionRequest | undefined {
  const session = p.session;
  if (session === undefined || session === null) return undefined;
  if (typeof session !== "object" || Array.isArray(session)) {
    throw invalidParams(`session must be an object, got ${show(session)}`);
  }
  const resume = (session as Record<string, unknown>).resume;
  if (resume === undefined || resume === null) return {};
  if (typeof resume !== "string" || resume === "") {
    throw invalidParams(`session.resume must be a non-empty string, got ${show(resume)}`);
  }
  return { resume };
}

/**
 * Read `process/start`'s `ttlMs`: how long the process may keep running
 * while nobody is attached to its session.
 *
 * @param inSession whether the connection has a resumable session
 * @param maxTtlMs the largest accepted value (`--max-ttl-ms`)
 * @throws {RpcError} -32602 when it is not a positive integer, exceeds
 * `maxTtlMs`, or is given outside a session
 */
export function readTtlMs(
  p: Record<string, unknown>,
  inSession: boolean,
  maxTtlMs: number,
): number | undefined {
  const ttl = p.ttlMs;
  if (ttl === undefined || ttl === null) return undefined;
  if (typeof ttl !== "number" || !Number.isSafeInteger(ttl) || ttl <= 0) {
    throw invalidParams(`ttlMs must be a positive integer of milliseconds, got ${show(ttl)}`);
  }
  if (!inSession) {
    throw invalidParams(
      `ttlMs ${ttl} needs a resumable session: initialize with "session": {} first`,
    );
  }
  if (ttl > maxTtlMs) {
    throw invalidParams(`ttlMs ${ttl} exceeds the server's limit of ${maxTtlMs} (--max-ttl-ms)`);
  }
  return ttl;
}
