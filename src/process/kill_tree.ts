/**
 * Killing a whole process tree: the child's process group, plus any
 * descendants that moved to a group or session of their own.
 *
 * @module
 */
import { readdir, readFile } from "node:fs/promises";
import process from "node:process";

/**
 * The pids of all live descendants of `pid`, found through `/proc` (Linux).
 * Returns an empty list where `/proc` is not available.
 */
export async function descendantsOf(pid: number): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  await Promise.all(names.map(async (name) => {
    const child = Number(name);
    if (!Number.isInteger(child)) return;
    let stat: string;
    try {
      stat = await readFile(`/proc/${name}/stat`, "latin1");
    } catch {
      return;
    }
    // The command name may hold spaces and parentheses; fields resume after
    // the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(rest[1]);
    const list = children.get(ppid);
    if (list) list.push(child);
    else children.set(ppid, [child]);
  }));
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.pop()!;
    for (const c of children.get(next) ?? []) {
      out.push(c);
      queue.push(c);
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
