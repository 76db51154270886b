/**
 * `read_file`'s view of a text file: whole, or the lines asked for (a
 * range, the head or the tail), bounded so that one call never floods the
 * model's context; a note says what was left out and how to read on.
 *
 * @module
 */
import type { FileSystem } from "../fs/types.ts";
import { ToolInputError } from "./tool_args.ts";

/** Which lines to read; at most one of `head`, `tail` and `offset`/`length`. */
export interface LineSelection {
  /** First line, from 1. */
  offset?: number;
  /** Lines from `offset`. */
  length?: number;
  /** The first N lines. */
  head?: number;
  /** The last N lines. */
  tail?: number;
}

/** What was read. */
export interface TextWindow {
  /** The lines, exactly as in the file. */
  text: string;
  /** What was left out and how to read on, when anything was. */
  note: string | undefined;
  /** The first line shown, from 1 (0 when none). */
  firstLine: number;
  /** The last line shown (0 when none). */
  lastLine: number;
  /** Lines in the file, when the whole file was scanned. */
  totalLines: number | undefined;
  /** Whether the size limit cut the selection short. */
  truncated: boolean;
}

/** The most bytes of a file scanned for lines. */
export const MAX_SCAN_BYTES = 16 * 1024 * 1024;
/** The most bytes of text one read returns. */
export const MAX_TEXT_BYTES = 256 * 1024;

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Read the selected lines of `path`. */
export async function readTextWindow(
  fs: FileSystem,
  path: string,
  sel: LineSelection,
): Promise<TextWindow> {
  const picked = [sel.head, sel.tail, sel.offset ?? sel.length].filter((v) => v !== undefined);
  if (picked.length > 1) {
    throw new ToolInputError("give at most one of head, tail and offset/length");
  }
  let { data, size, eof } = await fs.readRange(path, { length: MAX_SCAN_BYTES });
  let skippedStart = false;
  if (sel.tail !== undefined && !eof) {
    // A big file's tail: scan its end, from the first whole line in it.
    ({ data } = await fs.readRange(path, { offset: size - MAX_SCAN_BYTES }));
    data = data.subarray(data.indexOf(10) + 1);
    skippedStart = true;
    eof = true;
  }
  if (data.subarray(0, 8192).includes(0)) {
    return {
      text: "",
      note: `${path} is a binary file of ${size} bytes; it is not shown.`,
      firstLine: 0,
      lastLine: 0,
      totalLines: undefined,
      truncated: false,
    };
  }
  const lines = decoder.decode(data).split(/(?<=\n)/).filter((l) => l !== "");
  const total = eof && !skippedStart ? lines.length : undefined;
  let first = 0; // index into lines
  let count = lines.length;
  if (sel.head !== undefined) count = Math.min(sel.head, lines.length);
  else if (sel.tail !== undefined) first = Math.max(0, lines.length - sel.tail);
  else if (sel.offset !== undefined || sel.length !== undefined) {
    first = Math.min((sel.offset ?? 1) - 1, lines.length);
    count = sel.length ?? lines.length;
  }
  const chosen = lines.slice(first, first + count);
  const { text, shown, truncated } = bounded(chosen);
  const firstLine = shown > 0 ? first + 1 : 0;
  const lastLine = first + shown;
  return {
    text,
    note: describe({ path, firstLine, lastLine, total, truncated, skippedStart }),
    firstLine: skippedStart ? 0 : firstLine,
    lastLine: skippedStart ? 0 : lastLine,
    totalLines: total,
    truncated,
  };
}

/** The lines that fit in {@linkcode MAX_TEXT_BYTES}; a single longer line is cut. */
function bounded(lines: string[]): { text: string; shown: number; truncated: boolean } {
  let bytes = 0;
  let shown = 0;
  for (const line of lines) {
    const n = encoder.encode(line).length;
    if (bytes + n > MAX_TEXT_BYTES) break;
    bytes += n;
    shown++;
  }
  if (shown === lines.length) return { text: lines.join(""), shown, truncated: false };
  if (shown > 0) return { text: lines.slice(0, shown).join(""), shown, truncated: true };
  const cut = decoder.decode(encoder.encode(lines[0]).subarray(0, MAX_TEXT_BYTES));
  return { text: cut.replace(/\uFFFD$/, ""), shown: 1, truncated: true };
}

function describe(w: {
  path: string;
  firstLine: number;
  lastLine: number;
  total: number | undefined;
  truncated: boolean;
  skippedStart: boolean;
}): string | undefined {
  if (w.skippedStart) {
    return `[The last lines of ${w.path}, a file over ${MAX_SCAN_BYTES} bytes.]`;
  }
  const whole = w.total !== undefined && w.firstLine <= 1 && w.lastLine === w.total &&
    !w.truncated;
  if (whole) return undefined;
  const of = w.total === undefined
    ? `of more (the file is over ${MAX_SCAN_BYTES} bytes)`
    : `of ${w.total}`;
  const range = w.lastLine === 0 ? "No lines" : `Lines ${w.firstLine}-${w.lastLine}`;
  const more = w.truncated ? ` The rest did not fit in ${MAX_TEXT_BYTES} bytes.` : "";
  const next = (w.total === undefined || w.lastLine < w.total) && w.lastLine > 0
    ? ` Read on with offset: ${w.lastLine + 1}.`
    : "";
  return `[${range} ${of}.${more}${next}]`;
}
