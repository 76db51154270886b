/**
 * Terminal output as plain text: what a PTY prints, with its control
 * sequences taken out and its line editing applied, so that a client
 * reads the lines a person would have seen rather than escape codes and
 * every frame of a progress bar.
 *
 * Removed: CSI sequences (`ESC [` or the 8-bit `0x9B`, parameters, one
 * final byte 0x40–0x7E, so `ESC[31m` and `ESC[?25l`), OSC strings
 * (`ESC ]` to BEL or `ESC \`: window titles; a hyperlink's target goes and
 * its visible text stays), DCS, SOS, PM and APC strings (`ESC P`, `X`,
 * `^`, `_` to `ESC \`), other escape sequences (`ESC =`, `ESC M`,
 * `ESC ( B`), and the control characters other than tab and newline.
 *
 * Applied, as a terminal shows a line: `\r` returns to the start of the
 * line and what follows overwrites it (`"10%\r20%\n"` is `"20%\n"`, and so
 * `\r\n` is `\n`); `\b` steps back one character, dropping it when it was
 * the last; `ESC[K` (erase in line) and `ESC[nG` (go to column n) act on
 * the line too, since progress bars redraw with them as often as with
 * `\r`. Other cursor movement is removed without effect.
 *
 * @module
 */

/** The longest line held by default before it is let go (see {@link AnsiStripperOptions}). */
const DEFAULT_MAX_LINE = 16_384;

/** Where the parser is: in text, or inside a sequence that is not finished yet. */
type State = "text" | "escape" | "csi" | "string" | "stringEscape";

// Control characters are what this module looks for, so the rule against
// them in a regex does not apply here.

/** Characters that end or interrupt plain text. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;

/** Characters that may end (or cancel) a control string. */
// deno-lint-ignore no-control-regex
const STRING_END = /[\x07\x18\x1a\x1b\x9c]/g;

/** CAN and SUB, which cancel any sequence in progress. */
const isCancel = (code: number) => code === 0x18 || code === 0x1a;

/** How an {@link AnsiStripper} bounds what it holds. */
export interface AnsiStripperOptions {
  /**
   * The most characters of one unfinished line held back (16384 by
   * default). A longer line is let go at that length, as a terminal wraps
   * it: a later `\r` rewrites only what came after.
   */
  maxLineLength?: number;
}

/**
 * {@link stripAnsi} for a stream: feed chunks to `push` as they come and
 * call `flush` at the end. A chunk may end anywhere, even inside an
 * escape sequence; the output is the same as for the whole text at once.
 * Because a later `\r` or `\b` may still rewrite the line being written,
 * `push` returns only finished lines; the unfinished one waits for its
 * `\n` or for `flush` (and `peek` shows it meanwhile).
 *
 * @example
 * ```ts
 * import { AnsiStripper } from "./strip_ansi.ts";
 * const stripper = new AnsiStripper();
 * stripper.push("\x1b[32mok\x1b"); // ""
 * stripper.push("[0m\n 10%\r"); // "ok\n"
 * stripper.push(" 50%"); // ""
 * stripper.peek(); // " 50%"
 * stripper.push("\r100%\n"); // "100%\n"
 * stripper.flush(); // ""
 * ```
 */
export class AnsiStripper {
  #state: State = "text";
  /** Parameters and intermediates of the sequence being read (bounded). */
  #params = "";
  /** Whether BEL ends the control string being read (it does for OSC). */
  #bellEnds = false;
  /** The line being written, one code point per cell, and the cursor in it. */
  #cells: string[] = [];
  #cursor = 0;
  #out: string[] = [];
  readonly #maxLine: number;

  /**
   * A stripper at the start of a stream.
   *
   * @param options bounds on what is held back
   */
  constructor(options: AnsiStripperOptions = {}) {
    const { maxLineLength = DEFAULT_MAX_LINE } = options;
    if (!Number.isInteger(maxLineLength) || maxLineLength < 1) {
      throw new RangeError(`maxLineLength must be a positive integer, got ${maxLineLength}`);
    }
    this.#maxLine = maxLineLength;
  }

  /** The plain text of `chunk` that is final: every line it finishes. */
  push(chunk: string): string {
    let i = 0;
    while (i < chunk.length) {
      if (this.#state === "text") i = this.#text(chunk, i);
      else if (this.#state === "string") i = this.#string(chunk, i);
      else if (this.#sequence(chunk.charCodeAt(i))) i++;
    }
    const out = this.#out.join("");
    this.#out = [];
    return out;
  }

  /** The unfinished line as it shows now, without taking it. */
  peek(): string {
    return this.#cells.join("");
  }

  /**
   * The unfinished line, taken: the stream is over (or the caller wants
   * what it has). A sequence left unfinished is dropped; the stripper
   * starts afresh after.
   */
  flush(): string {
    const out = this.#cells.join("");
    this.#cells = [];
    this.#cursor = 0;
    this.#state = "text";
    this.#params = "";
    return out;
  }

  /** Reads plain text from `i` up to and including one control character; the next index. */
  #text(chunk: string, i: number): number {
    CONTROL.lastIndex = i;
    const found = CONTROL.exec(chunk);
    const end = found ? found.index : chunk.length;
    if (end > i) this.#write(chunk.slice(i, end));
    if (!found) return end;
    this.#control(chunk.charCodeAt(end));
    return end + 1;
  }

  /** Acts on one control character met in text. */
  #control(code: number): void {
    if (code === 0x0a) {
      this.#out.push(this.#cells.join(""), "\n");
      this.#cells = [];
      this.#cursor = 0;
    } else if (code === 0x0d) this.#cursor = 0;
    else if (code === 0x08) this.#backspace();
    else if (code === 0x09) this.#write("\t");
    else if (code === 0x1b) this.#enter("escape");
    else if (code === 0x9b) this.#enter("csi");
    else if (code === 0x9d) this.#enter("string", true);
    else if (code === 0x90 || code === 0x98 || code === 0x9e || code === 0x9f) {
      this.#enter("string", false);
    }
    // Any other control character shows nothing, so it is dropped.
  }

  #enter(state: State, bellEnds = false): void {
    this.#state = state;
    this.#params = "";
    this.#bellEnds = bellEnds;
  }

  /**
   * Reads one character of an escape or CSI sequence, or of the escape
   * that may end a control string. False when the character is not part
   * of the sequence: the sequence is abandoned and the character is read
   * again as text, as a terminal does.
   */
  #sequence(code: number): boolean {
    if (isCancel(code)) {
      this.#state = "text";
      return true;
    }
    if (this.#state === "stringEscape") {
      // ESC \ ends the string; an ESC followed by anything else ends it too
      // and starts a new sequence.
      if (code === 0x5c) this.#state = "text";
      else this.#enter("escape");
      return code === 0x5c;
    }
    if (code === 0x1b) {
      this.#enter("escape");
      return true;
    }
    if (this.#state === "csi") return this.#csiByte(code);
    const introducer = this.#params === "";
    if (introducer && code === 0x5b) this.#enter("csi");
    else if (introducer && code === 0x5d) this.#enter("string", true);
    else if (introducer && (code === 0x50 || code === 0x58 || code === 0x5e || code === 0x5f)) {
      this.#enter("string", false);
    } else if (code >= 0x20 && code <= 0x2f) this.#keep(code);
    else if (code >= 0x30 && code <= 0x7e) this.#state = "text";
    else {
      this.#state = "text";
      return false;
    }
    return true;
  }

  /** Reads one byte of a CSI sequence (as `#sequence` does). */
  #csiByte(code: number): boolean {
    if (code >= 0x20 && code <= 0x3f) this.#keep(code);
    else if (code >= 0x40 && code <= 0x7e) {
      this.#state = "text";
      this.#editLine(this.#params, String.fromCharCode(code));
    } else {
      this.#state = "text";
      return false;
    }
    return true;
  }

  /** Notes a parameter or intermediate byte; a runaway sequence keeps only its start. */
  #keep(code: number): void {
    if (this.#params.length < 32) this.#params += String.fromCharCode(code);
  }

  /** Skips the body of a control string from `i`, up to and including what ends it. */
  #string(chunk: string, i: number): number {
    STRING_END.lastIndex = i;
    for (let found = STRING_END.exec(chunk); found; found = STRING_END.exec(chunk)) {
      const code = chunk.charCodeAt(found.index);
      if (code === 0x07 && !this.#bellEnds) continue;
      if (code === 0x1b) this.#state = "stringEscape";
      else this.#state = "text";
      return found.index + 1;
    }
    return chunk.length;
  }

  /** Applies the CSI sequences that edit the line: erase in line (K), go to column (G). */
  #editLine(params: string, final: string): void {
    if (!/^\d*$/.test(params)) return;
    const n = params === "" ? 0 : Number(params);
    if (final === "G") this.#cursor = Math.max(n, 1) - 1;
    if (final !== "K") return;
    const cells = this.#cells;
    if (n === 0) cells.length = Math.min(cells.length, this.#cursor);
    else if (n === 1) cells.fill(" ", 0, Math.min(cells.length, this.#cursor + 1));
    else if (n === 2) this.#cells = [];
  }

  /** Steps the cursor back one cell, dropping the cell when it was the last. */
  #backspace(): void {
    if (this.#cursor === 0) return;
    this.#cursor--;
    if (this.#cursor === this.#cells.length - 1) this.#cells.pop();
  }

  /** Writes plain text at the cursor, over what is there. */
  #write(text: string): void {
    for (const ch of text) {
      const cells = this.#cells, at = this.#cursor;
      const code = ch.charCodeAt(0);
      // A surrogate pair split between chunks joins up again in one cell.
      if (code >= 0xdc00 && code <= 0xdfff && at > 0 && /^[\ud800-\udbff]$/.test(cells[at - 1])) {
        cells[at - 1] += ch;
        continue;
      }
      while (cells.length < at) cells.push(" ");
      cells[at] = ch;
      this.#cursor = at + 1;
      if (this.#cursor === cells.length && cells.length >= this.#maxLine) {
        this.#out.push(cells.join(""));
        this.#cells = [];
        this.#cursor = 0;
      }
    }
  }
}

/**
 * `text` as a terminal would show it, without control sequences (what is
 * removed and what is applied is in the module doc). Tabs and newlines
 * stay; `\r\n` becomes `\n`.
 *
 * @example
 * ```ts
 * import { stripAnsi } from "./strip_ansi.ts";
 * stripAnsi("\x1b[1;31merror\x1b[0m: no such file\n"); // "error: no such file\n"
 * stripAnsi("10%\r20%\r30%\n"); // "30%\n"
 * stripAnsi("abcdef\rxy"); // "xycdef"
 * stripAnsi("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\"); // "link"
 * ```
 */
export function stripAnsi(text: string): string {
  const stripper = new AnsiStripper();
  return stripper.push(text) + stripper.flush();
}
