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
 * How many `/proc/N/stat` files one scan reads at a time. Reading them all
 * at once opened hundreds of files per scan; thirty processes that exit
 * together, each scanning for leftovers, ran the server out of file
 * descriptors (EMFILE) and flooded the runtime's blocking-I/O threads, so
 * that a child's pipe was not read for longer than the exit drain waits.
 */
const SCAN_CONCURRENCY = 8;

let scanning: Promise<ProcStat[] | undefined> | undefined;
let queuedScan: Promise<ProcStat[] | undefined> | undefined;

/**
 * Every process's stat, read a few at a time, or undefined where `/proc`
 * cannot be listed (not Linux). Callers that ask while a scan runs share
 * the next one, which starts after theirs was asked for: thirty processes
 * exiting together cost two scans, not thirty.
 */
export function readAllProcStats(): Promise<ProcStat[] | undefined> {
  if (!scanning) return startScan();
  queuedScan ??= scanning.then(() => {
    queuedScan = undefined;
    return startScan();
  });
  return queuedScan;
}

function startScan(): Promise<ProcStat[] | undefined> {
  const scan = scanProc().finally(() => {
    if (scanning === scan) scanning = undefined;
  });
  scanning = scan;
  return scan;
}

async function scanProc(): Promise<ProcStat[] | undefined> {
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return undefined;
  }
  const pids = names.filter((n) => /^\d+$/.test(n)).map(Number);
  const stats: ProcStat[] = [];
  let next = 0;
  const worker = async () => {
    while (next < pids.length) {
      const stat = await readProcStat(pids[next++]);
      if (stat) stats.push(stat);
    }
  };
  await Promise.all(Array.from({ length: SCAN_CONCURRENCY }, worker));
  return stats;
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
