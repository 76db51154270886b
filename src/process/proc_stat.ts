/**
 * `/proc/PID/stat`, read once and parsed once, with named fields (Linux).
 * The command name may hold spaces and parentheses, so the fields are
 * counted from the last `)`.
 *
 * @module
 */
import { readdir, readFile } from "node:fs/promises";

/** The fields of `/proc/PID/stat` this project uses. */
export interface ProcStat {
  /** The process id. */
  pid: number;
  /** The command name (at most 15 characters). */
  comm: string;
  /** The state letter: R, S, D, Z, ... */
  state: string;
  /** The parent's pid. */
  ppid: number;
  /** The process group id. */
  pgrp: number;
  /** The session id. */
  session: number;
  /** The foreground process group of its controlling terminal, or -1. */
  tpgid: number;
  /** When it started, in clock ticks since boot: with the pid, an identity. */
  startTime: string;
}

/**
 * Parse the text of `/proc/PID/stat`; undefined when it is not one.
 *
 * @example
 * ```ts
 * import { parseProcStat } from "./proc_stat.ts";
 * const stat = parseProcStat("42 (a b) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0");
 * console.log(stat?.comm, stat?.startTime); // "a b" "777"
 * ```
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  // After the name: state ppid pgrp session tty_nr tpgid flags minflt
  // cminflt majflt cmajflt utime stime cutime cstime priority nice
  // num_threads itrealvalue starttime ...
  const f = text.slice(close + 2).split(" ");
  if (f.length < 20) return undefined;
  return {
    pid: Number(text.slice(0, open).trim()),
    comm: text.slice(open + 1, close),
    state: f[0],
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    session: Number(f[3]),
    tpgid: Number(f[5]),
    startTime: f[19],
  };
}

/** Read one process's stat; undefined when it is gone (or not Linux). */
export async function readProcStat(pid: number): Promise<ProcStat | undefined> {
  try {
    return parseProcStat(await readFile(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return undefined;
  }
}

/**
 * Every process's stat, read concurrently, or undefined where `/proc`
 * cannot be listed (not Linux).
 */
export async function readAllProcStats(): Promise<ProcStat[] | undefined> {
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return undefined;
  }
  const stats = await Promise.all(
    names.filter((n) => /^\d+$/.test(n)).map((n) => readProcStat(Number(n))),
  );
  return stats.filter((s): s is ProcStat => s !== undefined);
}

/**
 * Whether one of `members` (each a pid with its `/proc` start time) still
 * exists and still belongs to group `pgid`: then that group never emptied
 * since the members were recorded, so its id was never free for reuse.
 */
export async function groupStillHas(
  pgid: number,
  members: readonly { pid: number; start: string }[],
): Promise<boolean> {
  for (const m of members) {
    const stat = await readProcStat(m.pid);
    if (stat && stat.startTime === m.start && stat.pgrp === pgid) return true;
  }
  return false;
}
