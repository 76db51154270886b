/**
 * The lifeline: a tiny reaper that ends every process tree the server
 * started when the server dies without cleaning up (SIGKILL, the OOM
 * killer, a crashed runtime, a container stop that does not wait).
 *
 * The reaper is one `/bin/sh` per server, in a session of its own, whose
 * stdin is a pipe that only the server holds open. The server tells it, one
 * line per event, which process groups are its own; when the server dies
 * for any reason the kernel closes the pipe, the reaper reads end-of-file
 * and kills those groups, their sessions and every descendant of theirs.
 * While the server lives it costs one pipe write per start and per exit.
 *
 * Why this and not a parent-death signal or a cgroup: docs/orphans.md.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { GroupLeftovers } from "./kill_tree.ts";
import { groupStillHas } from "./proc_stat.ts";

/**
 * The reaper, as `sh -c` runs it. Lines it reads (ids are decimal pids):
 *
 * - `+X` — X was just started and leads a group and session of its own
 *   (a leader cannot leave either, so while pid X is X, both are X's).
 * - `=X P:S P:S …` — X was reaped but left members in its group; the group
 *   is still X's only while one of those members (pid P, `/proc` start time
 *   S) exists and is in it (the server's own rule, see kill_tree.ts).
 * - `-X` — X and its group are gone: forget it.
 *
 * At end-of-file it picks its targets: each `+X` unless pid X now belongs
 * to a process that does not lead group and session X (a reused pid), and
 * each `=X` whose witness checks out.
 * It stops (SIGSTOP) every process in a target's group or session and
 * every descendant of one, scanning `/proc` until a pass finds no one new
 * (stopped processes cannot fork), then SIGKILLs them all. Without `/proc`
 * (macOS) it can only kill the groups of the `+X` it holds. While it waits
 * it runs only shell builtins; each scan runs one `grep` to read every
 * `/proc/PID/stat` (a shell's `read` takes a byte per system call, ~6
 * times slower; it is the fallback without grep).
 */
export const REAPER_SCRIPT: string = `
t=' ' g=' '
st() {
  IFS= read -r S 2>/dev/null </proc/$1/stat || return 1
  fields
}
fields() {
  S=\${S#*) }
  while :; do case $S in *') '*) S=\${S#*) };; *) return;; esac; done
}
drop() {
  case $t in *" $1 "*) t="\${t% $1 *} \${t#* $1 }";; esac
  case $g in *" $1 "*) g="\${g% $1 *} \${g#* $1 }";; esac
}
while IFS= read -r l; do
  x=\${l#?}; x=\${x%% *}
  case $x in ''|*[!0-9]*) continue;; esac
  drop $x
  case $l in
    +*) t="$t$x ";;
    =*) g="$g$x "; eval "w_$x=\\\${l#=\\$x}";;
  esac
done
if ! [ -r /proc/self/stat ]; then
  for x in $t; do kill -s KILL -- -$x 2>/dev/null; done
  exit 0
fi
T=' '
for x in $t; do
  if st $x; then set -- $S; [ "$3" = "$x" ] && [ "$4" = "$x" ] || continue; fi
  T="$T$x "
done
for x in $g; do
  eval "ws=\\$w_$x"
  for w in $ws; do
    st \${w%:*} || continue
    set -- $S
    if [ "$3" = "$x" ] && [ "\${20}" = "\${w#*:}" ]; then T="$T$x "; break; fi
  done
done
[ "$T" = ' ' ] && exit 0
if command -v grep >/dev/null 2>&1; then
  list() { grep -H '' /proc/[0-9]*/stat 2>/dev/null; }
else
  list() {
    for f in /proc/[0-9]*/stat; do
      IFS= read -r S 2>/dev/null <"$f" && printf '%s\\n' "$f:$S"
    done
  }
fi
N='
'
V=' '
while :; do
  n=0
  a=$(list)
  set -f
  IFS=$N
  for l in $a; do
    p=\${l#/proc/}; p=\${p%%/*}
    case $p in ''|*[!0-9]*) continue;; esac
    case $V in *" $p "*) continue;; esac
    [ "$p" = "$$" ] && continue
    S=$l; fields
    IFS=' '; set -- $S; IFS=$N
    case $T in
      *" $3 "*|*" $4 "*) ;;
      *) case $V in *" $2 "*) ;; *) continue;; esac;;
    esac
    kill -s STOP "$p" 2>/dev/null
    V="$V$p " n=1
  done
  unset IFS
  set +f
  [ $n = 0 ] && break
done
for p in $V; do kill -s KILL "$p" 2>/dev/null; done
`;

/** At most this many members of an exited leader's group are sent as witnesses. */
const MAX_WITNESSES = 16;

/** How the lifeline starts its reaper. */
export interface LifelineOptions {
  /** The shell that runs {@linkcode REAPER_SCRIPT} (default `/bin/sh`). */
  shell?: string;
  /** Told when the reaper cannot be started or died (the server's warning log). */
  onProblem?: (message: string) => void;
  /**
   * A reaper that dies sooner than this after its start is replaced only
   * this long after its death (default 1000); a later death, at once.
   */
  restartBackoffMs?: number;
  /**
   * How often the groups that exited leaders left behind are checked, so
   * that those that have emptied since are forgotten (default 60000).
   */
  pruneMs?: number;
}

/**
 * The server's side of the lifeline: what it has told the reaper, so that a
 * reaper that died can be replaced and told again. The reaper is started
 * on the first group it must know.
 *
 * @example
 * ```ts
 * import { Lifeline } from "./lifeline.ts";
 * const lifeline = new Lifeline({ onProblem: console.error });
 * lifeline.track(12345); // a child that leads its own group and session
 * lifeline.forget(12345); // it was reaped and left nothing behind
 * ```
 */
export class Lifeline {
  #shell: string;
  #onProblem: (message: string) => void;
  #restartBackoffMs: number;
  #pruneMs: number;
  /** The groups of exited leaders, with their witnesses, and the timer that checks them. */
  #leftovers = new Map<number, GroupLeftovers["members"]>();
  #pruneTimer: ReturnType<typeof setTimeout> | undefined;
  /** By group id, the line that describes it now. */
  #lines = new Map<number, string>();
  #reaper: ChildProcess | undefined;
  #startedAt = 0;
  #restartTimer: ReturnType<typeof setTimeout> | undefined;
  /** Set once the reaper could not be started, or on close: the lifeline is off. */
  #off = false;

  /**
   * A lifeline whose reaper starts with the first group it must know.
   *
   * @param options the shell, where problems are reported, the timings
   */
  constructor(options: LifelineOptions = {}) {
    this.#shell = options.shell ?? "/bin/sh";
    this.#onProblem = options.onProblem ?? (() => {});
    this.#restartBackoffMs = options.restartBackoffMs ?? 1000;
    this.#pruneMs = options.pruneMs ?? 60_000;
  }

  /** The running reaper's pid, if one runs (for tests and logs). */
  get reaperPid(): number | undefined {
    return this.#reaper?.pid;
  }

  /** `pgid` was just started and leads a new group and session. */
  track(pgid: number): void {
    this.#set(pgid, `+${pgid}`);
  }

  /** The leader was reaped and left `leftovers` in its group. */
  leftovers(leftovers: GroupLeftovers): void {
    const members = leftovers.members.slice(0, MAX_WITNESSES);
    const witnesses = members.map((m) => `${m.pid}:${m.start}`);
    this.#set(leftovers.pgid, `=${leftovers.pgid} ${witnesses.join(" ")}`);
    if (this.#off) return;
    this.#leftovers.set(leftovers.pgid, members);
    this.#schedulePrune();
  }

  /** The group is gone: its id may be reused, so the reaper must forget it. */
  forget(pgid: number): void {
    this.#leftovers.delete(pgid);
    if (!this.#lines.delete(pgid)) return;
    this.#write(`-${pgid}`);
  }

  /**
   * End the lifeline as this process's death would: the reaper kills every
   * group still listed, then exits. Nothing is tracked afterwards.
   */
  close(): void {
    this.#off = true;
    if (this.#pruneTimer !== undefined) clearTimeout(this.#pruneTimer);
    this.#pruneTimer = undefined;
    if (this.#restartTimer !== undefined) clearTimeout(this.#restartTimer);
    this.#restartTimer = undefined;
    this.#reaper?.stdin?.end();
    this.#reaper = undefined;
  }

  /**
   * Every line is written at once: a forget that waited would leave the
   * reaper a pid that may be reused meanwhile. Measured, the reaper spends
   * 50 to 110 µs of CPU per command on its two lines; batching the forgets
   * and making the reaper check each new process's start time instead cost
   * it ~280 µs (the shell reads `/proc` a byte at a time).
   */
  #set(pgid: number, line: string): void {
    if (!Number.isSafeInteger(pgid) || pgid <= 1) {
      throw new RangeError(`lifeline: ${pgid} is not a process group id`);
    }
    if (this.#off) return;
    this.#lines.set(pgid, line);
    this.#write(line);
  }

  #write(line: string): void {
    if (this.#off) return;
    if (this.#reaper) this.#reaper.stdin?.write(line + "\n");
    // A new reaper is told everything known, which includes this; one that
    // is due to be restarted will be.
    else if (this.#restartTimer === undefined && this.#lines.size > 0) this.#start();
  }

  /**
   * Background jobs of exited leaders end on their own too; the reaper
   * would skip such a group, but both sides would keep it forever.
   */
  #schedulePrune(): void {
    if (this.#pruneTimer !== undefined || this.#leftovers.size === 0) return;
    this.#pruneTimer = setTimeout(async () => {
      for (const [pgid, members] of [...this.#leftovers]) {
        if (!(await groupStillHas(pgid, members))) this.forget(pgid);
      }
      this.#pruneTimer = undefined;
      if (!this.#off) this.#schedulePrune();
    }, this.#pruneMs);
    (this.#pruneTimer as { unref?: () => void }).unref?.();
  }

  /** Start a reaper and tell it everything known so far. */
  #start(): void {
    let reaper: ChildProcess;
    try {
      reaper = spawn(this.#shell, ["-c", REAPER_SCRIPT], {
        // Its own session: a signal to the server's group or a hang-up of
        // the server's terminal must not take the reaper with the server.
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
        argv0: "exec-server-reaper",
      });
    } catch (err) {
      this.#fail(err);
      return;
    }
    this.#reaper = reaper;
    this.#startedAt = performance.now();
    // A failed spawn is reported here (Deno may report it more than once).
    reaper.on("error", (err) => {
      if (this.#reaper === reaper) this.#fail(err);
    });
    // A reaper that died makes writes fail with EPIPE; its exit is handled below.
    reaper.stdin?.on("error", () => {});
    reaper.once("exit", (code, signal) => this.#exited(reaper, code, signal));
    try {
      // Neither the reaper nor its pipe may keep the server's event loop alive.
      reaper.unref();
      (reaper.stdin as { unref?: () => void } | null)?.unref?.();
    } catch {
      // Deno throws here when the spawn failed; the error event says why.
      return;
    }
    const known = [...this.#lines.values()];
    if (known.length > 0) reaper.stdin?.write(known.join("\n") + "\n");
  }

  #fail(err: unknown): void {
    this.#off = true;
    this.#reaper = undefined;
    const message = err instanceof Error ? err.message : String(err);
    this.#onProblem(
      `lifeline: cannot start the reaper (${this.#shell}): ${message}; ` +
        `processes will outlive a server that is killed`,
    );
  }

  #exited(reaper: ChildProcess, code: number | null, signal: string | null): void {
    if (this.#reaper !== reaper || this.#off) return;
    this.#reaper = undefined;
    this.#onProblem(`lifeline: the reaper (pid ${reaper.pid}) exited (${signal ?? code})`);
    if (this.#lines.size === 0 || this.#restartTimer !== undefined) return;
    // Restarted at once unless it keeps dying: then once a second at most.
    const backoff = this.#restartBackoffMs;
    const delay = performance.now() - this.#startedAt < backoff ? backoff : 0;
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (!this.#reaper && !this.#off) this.#start();
    }, delay);
    (this.#restartTimer as { unref?: () => void }).unref?.();
  }
}

let active: Lifeline | undefined;

/**
 * Turn the lifeline on for this process: from now on every process group
 * started here (pipes and PTYs, sandboxed or not) is known to a reaper that
 * kills it if this process dies. Called once by the server program; a
 * library that starts processes is not affected unless it calls this.
 *
 * @returns the lifeline (the same one on every call)
 */
export function startLifeline(options: LifelineOptions = {}): Lifeline {
  active ??= new Lifeline(options);
  return active;
}

/** The lifeline, when {@linkcode startLifeline} turned it on. */
export function activeLifeline(): Lifeline | undefined {
  return active;
}
