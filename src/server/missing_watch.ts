/**
 * `fs/watchMissing`: tell the client once any of some missing paths
 * appears (the Codex CLI watches for `AGENTS.md` and friends so that it
 * re-reads project docs created after it started). Polled: a watch is a
 * handful of `stat` calls every interval, works on every filesystem and
 * needs no inotify quota.
 *
 * @module
 */
import { stat } from "node:fs/promises";

/** One watch per id; each fires at most once: a missing path appeared or a present one went. */
export class MissingWatches {
  #watches = new Map<string, ReturnType<typeof setInterval>>();
  #intervalMs: number;
  #notify: (watchId: string | number) => void;

  /**
   * @param notify called with the watch id once one of its paths exists
   * @param intervalMs how often the paths are checked
   */
  constructor(notify: (watchId: string | number) => void, intervalMs = 250) {
    this.#notify = notify;
    this.#intervalMs = intervalMs;
  }

  /**
   * Watch `missing` (absolute paths) to appear and `present` ones to go,
   * under `watchId`, replacing a watch of the same id.
   */
  watch(watchId: string | number, missing: string[], present: string[] = []): void {
    this.#stop(String(watchId));
    if (missing.length + present.length === 0) return;
    let checking = false;
    const timer = setInterval(async () => {
      if (checking) return;
      checking = true;
      try {
        const exists = (p: string) => stat(p).then(() => true, () => false);
        const appeared = await Promise.all(missing.map(exists));
        const still = await Promise.all(present.map(exists));
        const changed = appeared.some(Boolean) || still.some((s) => !s);
        if (changed && this.#watches.get(String(watchId)) === timer) {
          this.#stop(String(watchId));
          this.#notify(watchId);
        }
      } finally {
        checking = false;
      }
    }, this.#intervalMs);
    this.#watches.set(String(watchId), timer);
  }

  /** Stop every watch (the session ended). */
  close(): void {
    for (const id of [...this.#watches.keys()]) this.#stop(id);
  }

  #stop(id: string): void {
    const timer = this.#watches.get(id);
    if (timer !== undefined) clearInterval(timer);
    this.#watches.delete(id);
  }
}
