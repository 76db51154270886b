/**
 * How the differential test (tests/codex_diff_test.ts) compares what the
 * two servers answered: observations, by shape (keys, JSON types, array
 * lengths), by outcome (ok or the error code), by chosen exact values, and
 * listings of the scratch trees entry by entry; and the reviewed list of
 * differences that are meant to be ({@linkcode Intended}).
 */
import type { Msg } from "./harness.ts";

/** Which values of an observation are compared exactly: all, or these paths. */
export type Exact = true | string[];

/** One thing a case saw: a response (`{result}` or `{error}`) or any value. */
export interface Observation {
  /** Names it within its case; both sides must record the same labels in order. */
  label: string;
  /** Normalized (placeholders for paths). */
  value: unknown;
  /** Compared exactly besides by shape. */
  exact?: Exact;
  /** A listing of the tree: compared entry by entry, as `disk` differences. */
  disk?: boolean;
}

/** A reviewed, expected difference between upstream and this server. */
export interface Intended {
  /** The case, or `*` for every case. */
  case: string;
  /** The observation (its label, or labels matching), or every one when absent. */
  label?: string | RegExp;
  /** What kind of comparison differs. */
  kind: "outcome" | "shape" | "value" | "message" | "disk";
  /**
   * Where in the observation (`result.x[0].y`; a prefix matches what is
   * below it), or for `disk` the path in the tree; anywhere when absent.
   */
  path?: string | RegExp;
  /** For a key only one side has: which side (either when absent). */
  onlyIn?: SideName;
  /** For a `value` difference: what ours must be for the entry to apply. */
  ours?: unknown;
  /** What differs. */
  what: string;
  /** Why it may. */
  why: string;
  /**
   * Set when the difference depends on upstream's timing, so that a run
   * may not show it: says why. Such an entry is not required to be seen.
   */
  mayNotOccur?: string;
}

/** One difference found. */
export interface Mismatch {
  /** The case. */
  case: string;
  /** The observation, or `<disk>`. */
  label: string;
  /** What kind of comparison. */
  kind: Intended["kind"] | "script";
  /** Where. */
  path: string;
  /** Upstream's side and ours, shown. */
  detail: string;
  /** For a key only one side has: which. */
  onlyIn?: SideName;
  /** For a `value` difference: ours. */
  ours?: unknown;
}

/** The two server kinds. */
export type SideName = "upstream" | "ours";

/** The JSON type of a value, arrays and null told apart. */
function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

const show = (v: unknown): string => {
  const text = JSON.stringify(v);
  return text === undefined ? "absent" : text.length > 160 ? `${text.slice(0, 160)}…` : text;
};

/** Differences of shape (keys, JSON types, array lengths) between two values. */
export function shapeDiff(
  up: unknown,
  ours: unknown,
  path: string,
  out: [string, string, SideName?][],
): void {
  const [tu, to] = [typeName(up), typeName(ours)];
  if (tu !== to) {
    out.push([path, `upstream ${tu} ${show(up)}, ours ${to} ${show(ours)}`]);
    return;
  }
  if (tu === "array") {
    const [a, b] = [up as unknown[], ours as unknown[]];
    if (a.length !== b.length) out.push([path, `length: upstream ${a.length}, ours ${b.length}`]);
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      shapeDiff(a[i], b[i], `${path}[${i}]`, out);
    }
  } else if (tu === "object") {
    const [a, b] = [up as Record<string, unknown>, ours as Record<string, unknown>];
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const sub = path === "" ? k : `${path}.${k}`;
      if (!(k in b)) out.push([sub, `only upstream has it: ${show(a[k])}`, "upstream"]);
      else if (!(k in a)) out.push([sub, `only ours has it: ${show(b[k])}`, "ours"]);
      else shapeDiff(a[k], b[k], sub, out);
    }
  }
}

/** The value at a dotted path (`a.b[0].c`), or undefined. */
function at(value: unknown, path: string): unknown {
  const keys = path.split(/\.|\[(\d+)\]/).filter((k) => k !== undefined && k !== "");
  return keys.reduce<unknown>(
    (v, k) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
    value,
  );
}

/** A response's outcome: `ok` or its error code. */
function outcome(v: unknown): string | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const m = v as Msg;
  if ("error" in m) return String(m.error?.code);
  return "result" in m ? "ok" : undefined;
}

/** The differences of one pair of observations. */
function compareObservation(name: string, up: Observation, ours: Observation): Mismatch[] {
  const out: Mismatch[] = [];
  const add = (kind: Mismatch["kind"], path: string, detail: string, onlyIn?: SideName) =>
    out.push({ case: name, label: up.label, kind, path, detail, onlyIn });
  if (up.disk) {
    valueDiff(up.value, ours.value, "", true, (p, d) => add("disk", p, d));
    return out;
  }
  const [ou, oo] = [outcome(up.value), outcome(ours.value)];
  if (ou !== oo) {
    add("outcome", "", `upstream ${ou}, ours ${oo}: ${show(up.value)} vs ${show(ours.value)}`);
    return out;
  }
  const shapes: [string, string, SideName?][] = [];
  shapeDiff(up.value, ours.value, "", shapes);
  for (const [path, detail, onlyIn] of shapes) {
    add(path === "error.message" ? "message" : "shape", path, detail, onlyIn);
  }
  const um = at(up.value, "error.message"), om = at(ours.value, "error.message");
  if (typeof um === "string" && typeof om === "string" && um !== om) {
    add("message", "error.message", `upstream ${show(um)}, ours ${show(om)}`);
  }
  const exact = up.exact === true ? [""] : up.exact ?? [];
  for (const path of exact) {
    const [a, b] = path === ""
      ? [up.value, ours.value]
      : [at(up.value, path), at(ours.value, path)];
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    // Keys only one side has are differences of shape, reported above.
    valueDiff(a, b, path, false, (p, d, theirs) => {
      add("value", p, d);
      out[out.length - 1].ours = theirs;
    });
  }
  return out;
}

/**
 * Leaf-by-leaf value differences. With `missing`, a key only one side has
 * is one too (listings); without, only the keys both have are compared.
 */
function valueDiff(
  a: unknown,
  b: unknown,
  path: string,
  missing: boolean,
  add: (p: string, d: string, ours: unknown) => void,
): void {
  const kind = typeName(a);
  if (kind !== typeName(b) || (kind !== "object" && kind !== "array")) {
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      add(path, `upstream ${show(a)}, ours ${show(b)}`, b);
    }
    return;
  }
  const ra = a as Record<string, unknown>, rb = b as Record<string, unknown>;
  const sub = (k: string) => kind === "array" ? `${path}[${k}]` : path === "" ? k : `${path}.${k}`;
  for (const k of new Set([...Object.keys(ra), ...Object.keys(rb)])) {
    if (missing || (k in ra && k in rb)) valueDiff(ra[k], rb[k], sub(k), missing, add);
  }
}

/** The differences of two transcripts of one case. */
export function compareCase(name: string, up: Observation[], ours: Observation[]): Mismatch[] {
  const out: Mismatch[] = [];
  const n = Math.max(up.length, ours.length);
  for (let i = 0; i < n; i++) {
    const [a, b] = [up[i], ours[i]];
    if (!a || !b || a.label !== b.label) {
      const detail = `upstream ${show(a?.label)} ${show(a?.value)}, ours ${show(b?.label)} ${
        show(b?.value)
      }`;
      out.push({ case: name, label: a?.label ?? b?.label, kind: "script", path: "", detail });
      break;
    }
    out.push(...compareObservation(name, a, b));
  }
  return out;
}

/** Whether an intended difference covers a mismatch. */
export function covers(entry: Intended, m: Mismatch): boolean {
  if (entry.case !== "*" && entry.case !== m.case) return false;
  if (entry.kind !== m.kind) return false;
  if (entry.onlyIn !== undefined && entry.onlyIn !== m.onlyIn) return false;
  if ("ours" in entry && JSON.stringify(entry.ours) !== JSON.stringify(m.ours)) return false;
  const label = entry.label;
  if (typeof label === "string" && label !== m.label) return false;
  if (label instanceof RegExp && !label.test(m.label)) return false;
  if (entry.path === undefined) return true;
  if (entry.path instanceof RegExp) return entry.path.test(m.path);
  return m.path === entry.path || m.path.startsWith(`${entry.path}.`) ||
    m.path.startsWith(`${entry.path}[`) || m.path.startsWith(`${entry.path}/`);
}

/** Throw a report of what differs unexplained, and of entries not needed. */
export function failOn(unexplained: Mismatch[], stale: Intended[]): void {
  const lines = [
    ...unexplained.map((m) => `${m.case} / ${m.label} [${m.kind}] ${m.path}: ${m.detail}`),
    ...stale.map((e) =>
      `intended difference not seen: ${e.case} ${e.label ?? ""} [${e.kind}] ${
        e.path ?? ""
      }: ${e.what}`
    ),
  ];
  if (lines.length > 0) {
    throw new Error(`${lines.length} difference(s) from upstream:\n${lines.join("\n")}`);
  }
}
