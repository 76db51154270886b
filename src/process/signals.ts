/**
 * Signal names and numbers of the host, and the spelling rules the protocol
 * accepts (`"SIGINT"`, `"INT"`, `"interrupt"`).
 *
 * @module
 */
import { constants } from "node:os";

const BY_NAME: Record<string, number> = { ...constants.signals } as Record<string, number>;
const BY_NUMBER = new Map<number, string>();
for (const [name, num] of Object.entries(BY_NAME)) {
  // Prefer the canonical name when aliases share a number (SIGIOT/SIGABRT).
  if (!BY_NUMBER.has(num) || name === "SIGABRT" || name === "SIGCHLD") {
    BY_NUMBER.set(num, name);
  }
}

/** Thrown for a signal name this host does not know. */
export class UnknownSignalError extends Error {
  /** Name the unknown signal. */
  constructor(signal: string) {
    super(`unknown signal ${JSON.stringify(signal)}`);
    this.name = "UnknownSignalError";
  }
}

/**
 * The canonical `SIG*` name for a protocol spelling.
 *
 * @example
 * ```ts
 * import { normalizeSignal } from "./signals.ts";
 * normalizeSignal("interrupt"); // "SIGINT"
 * normalizeSignal("term"); // "SIGTERM"
 * ```
 * @throws {UnknownSignalError} for names the host does not have
 */
export function normalizeSignal(signal: string): string {
  if (signal === "interrupt") return "SIGINT";
  const upper = signal.toUpperCase();
  const name = upper.startsWith("SIG") ? upper : `SIG${upper}`;
  if (!(name in BY_NAME)) throw new UnknownSignalError(signal);
  return name;
}

/** The number of a canonical signal name, e.g. 9 for `SIGKILL`. */
export function signalNumber(name: string): number {
  const num = BY_NAME[name];
  if (num === undefined) throw new UnknownSignalError(name);
  return num;
}

/** The canonical name of a signal number, or `SIG<n>` when unnamed. */
export function signalName(num: number): string {
  return BY_NUMBER.get(num) ?? `SIG${num}`;
}

/**
 * The exit status of a child that exited with `code`, or was killed by
 * signal number `signum` (exit code 128+N, as a shell reports it).
 *
 * @example
 * ```ts
 * import { exitStatusOf } from "./signals.ts";
 * exitStatusOf(0, 9); // { exitCode: 137, signal: "SIGKILL" }
 * exitStatusOf(3, 0); // { exitCode: 3, signal: null }
 * ```
 */
export function exitStatusOf(
  code: number,
  signum: number | undefined,
): { exitCode: number; signal: string | null } {
  return signum !== undefined && signum > 0
    ? { exitCode: 128 + signum, signal: signalName(signum) }
    : { exitCode: code, signal: null };
}
