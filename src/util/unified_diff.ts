/**
 * A unified diff of two texts, as `diff -u` and git print it, so that an
 * edit can be shown to a client (or a person) as the patch it amounts to.
 * Lines are compared with Myers' O(ND) algorithm in its linear-space form
 * (the middle snake, divide and conquer), after the common head and tail
 * and the lines found on one side only are set aside: a long file with a
 * few edits costs little more than reading it, and memory stays linear
 * however different the texts are.
 *
 * @module
 */

/** How {@link unifiedDiff} labels and trims its output. */
export interface UnifiedDiffOptions {
  /** The path named in the `--- a/PATH` and `+++ b/PATH` header lines; "file" by default. */
  path?: string;
  /** Unchanged lines shown around each change (a non-negative integer); 3 by default. */
  context?: number;
}

/** A run of changed lines: old lines `[a0, a1)` became new lines `[b0, b1)`. */
interface Change {
  a0: number;
  a1: number;
  b0: number;
  b1: number;
}

/** The two sides as line ids, and which lines the diff found removed or added. */
interface Work {
  a: Int32Array;
  b: Int32Array;
  removed: Uint8Array;
  added: Uint8Array;
  forward: Int32Array;
  backward: Int32Array;
}

/**
 * The lines of `text`, each with its `\n` (only the last may lack one).
 * Keeping the terminator makes `"x"` and `"x\n"` different lines, which is
 * how `diff` tells a change to the final newline apart from no change.
 */
function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf("\n", start);
    const stop = end < 0 ? text.length : end + 1;
    lines.push(text.slice(start, stop));
    start = stop;
  }
  return lines;
}

/**
 * One step `d` of the search in one direction: the furthest point each
 * diagonal reaches with `d` edits. Backward runs on the reversed texts, so
 * one routine serves both. A move that would leave the box is not taken:
 * no optimal path takes it, and points outside would fake an overlap.
 */
function advance(
  w: Work,
  box: { aLo: number; aHi: number; bLo: number; bHi: number },
  v: Int32Array,
  d: number,
  reverse: boolean,
): void {
  const n = box.aHi - box.aLo, m = box.bHi - box.bLo, offset = m + 1;
  const active = (k: number) => k >= -(d - 1) && k <= d - 1 && k >= -m && k <= n;
  const lo = Math.max(-d, -m), hi = Math.min(d, n);
  for (let k = lo + ((lo + d) & 1); k <= hi; k += 2) {
    let x = 0;
    if (d > 0) {
      const left = active(k - 1) ? v[k - 1 + offset] : -1;
      const up = active(k + 1) ? v[k + 1 + offset] : -1;
      const fromLeft = left >= 0 && left < n ? left + 1 : -1;
      const fromUp = up >= 0 && up - (k + 1) < m ? up : -1;
      x = Math.max(fromLeft, fromUp);
      if (x < 0) {
        v[k + offset] = -1;
        continue;
      }
    }
    let y = x - k;
    if (reverse) {
      while (x < n && y < m && w.a[box.aHi - 1 - x] === w.b[box.bHi - 1 - y]) x++, y++;
    } else {
      while (x < n && y < m && w.a[box.aLo + x] === w.b[box.bLo + y]) x++, y++;
    }
    v[k + offset] = x;
  }
}

/**
 * A point `[x, y]` (absolute line indexes) that some shortest edit path
 * of the box passes through, strictly inside it when both sides differ at
 * both ends: the furthest forward point where the two searches meet.
 */
function midpoint(
  w: Work,
  box: { aLo: number; aHi: number; bLo: number; bHi: number },
): [number, number] {
  const n = box.aHi - box.aLo, m = box.bHi - box.bLo, delta = n - m, offset = m + 1;
  const odd = (delta & 1) !== 0;
  const meets = (k: number, dForward: number, dBackward: number): boolean => {
    const c = delta - k;
    if (k < -dForward || k > dForward || c < -dBackward || c > dBackward) return false;
    if (c < -m || c > n) return false;
    const xf = w.forward[k + offset], ub = w.backward[c + offset];
    return xf >= 0 && ub >= 0 && xf + ub >= n;
  };
  // The lowest diagonal in the box that a search `d` edits deep reaches.
  const first = (d: number) => Math.max(-d, -m) + ((Math.max(-d, -m) + d) & 1);
  for (let d = 0;; d++) {
    advance(w, box, w.forward, d, false);
    if (odd) {
      for (let k = first(d); k <= Math.min(d, n); k += 2) {
        if (meets(k, d, d - 1)) {
          const x = w.forward[k + offset];
          return [box.aLo + x, box.bLo + x - k];
        }
      }
    }
    advance(w, box, w.backward, d, true);
    if (!odd) {
      for (let c = first(d); c <= Math.min(d, n); c += 2) {
        const k = delta - c;
        if (meets(k, d, d)) {
          const x = w.forward[k + offset];
          return [box.aLo + x, box.bLo + x - k];
        }
      }
    }
  }
}

/** Marks the lines of old `[aLo, aHi)` and new `[bLo, bHi)` that a shortest edit removes or adds. */
function diffRange(w: Work, aLo: number, aHi: number, bLo: number, bHi: number): void {
  while (aLo < aHi && bLo < bHi && w.a[aLo] === w.b[bLo]) aLo++, bLo++;
  while (aLo < aHi && bLo < bHi && w.a[aHi - 1] === w.b[bHi - 1]) aHi--, bHi--;
  if (aLo === aHi || bLo === bHi) {
    w.removed.fill(1, aLo, aHi);
    w.added.fill(1, bLo, bHi);
    return;
  }
  // With both ends differing the edit distance is at least 2, so the
  // midpoint splits the box into two smaller ones and the recursion ends.
  const [x, y] = midpoint(w, { aLo, aHi, bLo, bHi });
  diffRange(w, aLo, x, bLo, y);
  diffRange(w, x, aHi, y, bHi);
}

/**
 * Which lines of `a` a shortest edit to `b` removes and which of `b` it
 * adds (sequences of line ids below `idCount`). A line found only on one
 * side is in no common subsequence, so it is marked at once and left out
 * of the search: texts that share little cost little.
 */
function shortestEdit(
  a: Int32Array,
  b: Int32Array,
  idCount: number,
): { removed: Uint8Array; added: Uint8Array } {
  const inA = new Uint8Array(idCount), inB = new Uint8Array(idCount);
  a.forEach((id) => inA[id] = 1);
  b.forEach((id) => inB[id] = 1);
  const keptA = a.map((id, i) => inB[id] ? i : -1).filter((i) => i >= 0);
  const keptB = b.map((id, j) => inA[id] ? j : -1).filter((j) => j >= 0);
  const n = keptA.length, m = keptB.length;
  const w: Work = {
    a: keptA.map((i) => a[i]),
    b: keptB.map((j) => b[j]),
    removed: new Uint8Array(n),
    added: new Uint8Array(m),
    forward: new Int32Array(n + m + 3),
    backward: new Int32Array(n + m + 3),
  };
  diffRange(w, 0, n, 0, m);
  const removed = new Uint8Array(a.length).fill(1), added = new Uint8Array(b.length).fill(1);
  keptA.forEach((i, k) => removed[i] = w.removed[k]);
  keptB.forEach((j, k) => added[j] = w.added[k]);
  return { removed, added };
}

/** The runs of changed lines between `oldLines` and `newLines`, in order. */
function changes(oldLines: string[], newLines: string[]): Change[] {
  const ids = new Map<string, number>();
  const idOf = (line: string) => {
    let id = ids.get(line);
    if (id === undefined) ids.set(line, id = ids.size);
    return id;
  };
  const n = oldLines.length, m = newLines.length;
  const a = Int32Array.from(oldLines, idOf), b = Int32Array.from(newLines, idOf);
  const w = shortestEdit(a, b, ids.size);
  const out: Change[] = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if ((i < n && w.removed[i]) || (j < m && w.added[j])) {
      const change = { a0: i, a1: i, b0: j, b1: j };
      while (i < n && w.removed[i]) i++;
      while (j < m && w.added[j]) j++;
      change.a1 = i;
      change.b1 = j;
      out.push(change);
    } else {
      i++, j++;
    }
  }
  return out;
}

/** A hunk header range: `start,count`, `start` alone for one line, the line before for none. */
function range(start: number, count: number): string {
  if (count === 0) return `${start},0`;
  return count === 1 ? `${start + 1}` : `${start + 1},${count}`;
}

/** One output line: its prefix and text, and the marker when it has no newline. */
function emit(out: string[], prefix: string, line: string): void {
  out.push(prefix, line);
  if (!line.endsWith("\n")) out.push("\n\\ No newline at end of file\n");
}

/** The hunk covering `group` (changes close enough to share context), appended to `out`. */
function hunk(
  out: string[],
  group: Change[],
  oldLines: string[],
  newLines: string[],
  context: number,
): void {
  const first = group[0], last = group[group.length - 1];
  const lead = Math.min(context, first.a0);
  const trail = Math.min(context, oldLines.length - last.a1);
  const a0 = first.a0 - lead, a1 = last.a1 + trail;
  const b0 = first.b0 - lead, b1 = last.b1 + trail;
  out.push(`@@ -${range(a0, a1 - a0)} +${range(b0, b1 - b0)} @@\n`);
  let i = a0;
  for (const change of group) {
    for (; i < change.a0; i++) emit(out, " ", oldLines[i]);
    for (; i < change.a1; i++) emit(out, "-", oldLines[i]);
    for (let j = change.b0; j < change.b1; j++) emit(out, "+", newLines[j]);
  }
  for (; i < a1; i++) emit(out, " ", oldLines[i]);
}

/**
 * The unified diff that turns `oldText` into `newText`: the header lines
 * `--- a/PATH` and `+++ b/PATH`, then hunks `@@ -l,s +l,s @@` with
 * `context` unchanged lines around each change; changes whose context
 * would touch or overlap share one hunk. A side whose last line has no
 * newline gets the `\ No newline at end of file` marker after it. Lines
 * are split at `\n` only, so a `\r` stays part of its line. Equal texts
 * give the empty string.
 *
 * @example
 * ```ts
 * import { unifiedDiff } from "./unified_diff.ts";
 * unifiedDiff("a\nb\nc\n", "a\nB\nc\n", { path: "notes.txt" });
 * // "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
 * unifiedDiff("same\n", "same\n"); // ""
 * ```
 */
export function unifiedDiff(
  oldText: string,
  newText: string,
  options: UnifiedDiffOptions = {},
): string {
  const { path = "file", context = 3 } = options;
  if (!Number.isInteger(context) || context < 0) {
    throw new RangeError(`context must be a non-negative integer, got ${context}`);
  }
  if (/[\r\n]/.test(path)) {
    throw new RangeError(`path ${JSON.stringify(path)} would break the header line`);
  }
  if (oldText === newText) return "";
  const oldLines = splitLines(oldText), newLines = splitLines(newText);
  const found = changes(oldLines, newLines);
  const out = [`--- a/${path}\n+++ b/${path}\n`];
  let group: Change[] = [];
  for (const change of found) {
    const previous = group[group.length - 1];
    if (previous && change.a0 - previous.a1 > 2 * context) {
      hunk(out, group, oldLines, newLines, context);
      group = [];
    }
    group.push(change);
  }
  hunk(out, group, oldLines, newLines, context);
  return out.join("");
}
