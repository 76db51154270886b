/**
 * Killing a whole process tree: the child's process group, plus any
 * descendants that moved to a group or session of their own.
 *
 * @module
 */
import process from "node:process";
import { activeLifeline } from "./lifeline.ts";
import { groupStillHas, type ProcStat, readAllProcStats } from "./proc_stat.ts";

/**
 * The pids of all live descendants of `pid`, found through `/proc` (Linux).
 * Returns an empty list where `/proc` is not available.
 */
export async function descendantsOf(pid: number): Promise<number[]> {
  return (await descendantStats(pid)).map((s) => s.pid);
}

/** Like {@linkcode descendantsOf}, with each descendant's `/proc` stat. */
export async function descendantStats(pid: number): Promise<ProcStat[]> {
  const stats = await readAllProcStats();
  if (!stats) return [];
  const children = new Map<number, ProcStat[]>();
  for (const stat of stats) {
    const list = children.get(stat.ppid);
    if (list) list.push(stat);
    else children.set(stat.ppid, [stat]);
  }
  const out: ProcStat[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.pop()!;
    for (const c of children.get(next) ?? []) {
      out.push(c);
      queue.push(c.pid);
    }
  }
  return out;
}

/** Send `signal` to the process group `pgid`; false when it is gone. */
export function signalGroup(pgid: number, signal: string): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Send `signal` to the group led by `pid` and to every descendant, wherever
 * it moved. Descendants are collected before any signal is sent, because a
 * dead parent's children are re-parented and can no longer be found.
 */
export async function signalTree(pid: number, signal: string): Promise<void> {
  const descendants = await descendantsOf(pid);
  signalGroup(pid, signal);
  for (const d of descendants) {
    try {
      process.kill(d, signal);
    } catch {
      // Already gone.
    }
  }
}

/**
 * Members of a process group whose leader has been reaped, recorded when the
 * leader's exit was seen: each pid with its start time.
 */
export interface GroupLeftovers {
  /** The group's id (the leader's pid). */
  pgid: number;
  /** The members then, as pid and `/proc` start time. */
  members: { pid: number; start: string }[];
}

/**
 * Record what is left of process group `pgid` right after its leader was
 * reaped, or undefined when nothing is (the common case, answered by one
 * `kill(-pgid, 0)` without reading `/proc`). While a group has members its
 * id cannot be given to a new process, so at this moment the group is still
 * the leader's.
 */
export async function leftoversOf(pgid: number): Promise<GroupLeftovers | undefined> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return undefined;
  }
  const stats = await readAllProcStats();
  if (!stats) return undefined;
  const members = stats.filter((s) => s.pgrp === pgid).map((s) => ({
    pid: s.pid,
    start: s.startTime,
  }));
  return members.length > 0 ? { pgid, members } : undefined;
}

/**
 * Send `signal` to a group recorded by {@linkcode leftoversOf}, but only if
 * it is provably the same group: one of the recorded members still exists
 * (same pid and start time) and still belongs to it, so the group never
 * emptied and its id was never free for reuse. Otherwise nothing is sent.
 *
 * @returns whether the group was signalled
 */
export async function signalLeftovers(
  leftovers: GroupLeftovers | undefined,
  signal: string,
): Promise<boolean> {
  if (!leftovers || !(await groupStillHas(leftovers.pgid, leftovers.members))) return false;
  signalGroup(leftovers.pgid, signal);
  return true;
}

/**
 * The process group a child leads, before and after the child is reaped:
 * until then signals go to the group and the live tree; afterwards only to
 * what was left of the group at that moment, and only while it is provably
 * the same group (see {@linkcode signalLeftovers}).
 *
 * @example
 * ```ts
 * import { ProcessGroup } from "./kill_tree.ts";
 * declare const childPid: number;
 * const group = new ProcessGroup(childPid);
 * group.signal("SIGINT");
 * group.reaped(); // once its exit has been seen
 * await group.killTree("SIGKILL");
 * ```
 */
export class ProcessGroup {
  /** The leader's pid, which is also the group's id. */
  readonly pid: number;
  #leftovers: Promise<GroupLeftovers | undefined> | undefined;

  /** @param pid a child that leads a group (and session) of its own */
  constructor(pid: number) {
    this.pid = pid;
    // Should the server die, the lifeline's reaper ends the group.
    activeLifeline()?.track(pid);
  }

  /** Whether the leader has been reaped. */
  get isReaped(): boolean {
    return this.#leftovers !== undefined;
  }

  /** The leader was reaped: record what is left of its group now. */
  reaped(): void {
    if (this.#leftovers) return;
    this.#leftovers = leftoversOf(this.pid);
    const lifeline = activeLifeline();
    // Once reaped the pid is free: the reaper keeps the group only while
    // it provably is the same group, and forgets one that emptied.
    if (lifeline) {
      void this.#leftovers.then((l) => l ? lifeline.leftovers(l) : lifeline.forget(this.pid));
    }
  }

  /** Send `signal` to the group (or to its recorded leftovers). */
  signal(signal: string): void {
    if (this.#leftovers) void this.#leftovers.then((l) => signalLeftovers(l, signal));
    else signalGroup(this.pid, signal);
  }

  /** Send `signal` to the whole tree (or to the recorded leftovers). */
  async killTree(signal: string): Promise<void> {
    if (!this.#leftovers) return await signalTree(this.pid, signal);
    const leftovers = await this.#leftovers;
    const signalled = await signalLeftovers(leftovers, signal);
    // A group that is gone or was just SIGKILLed needs no reaper any more.
    if (leftovers && (!signalled || signal === "SIGKILL")) activeLifeline()?.forget(this.pid);
  }
}
