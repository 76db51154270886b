import assert from "node:assert/strict";
import { AnsiStripper, stripAnsi } from "./strip_ansi.ts";

const ESC = "\x1b";

Deno.test("stripAnsi: plain text passes through unchanged", () => {
  for (
    const text of [
      "",
      "hello",
      "line 1\nline 2\n",
      "\tindented\tand tabbed\n",
      "unicode: é ü 日本 😀 \u200b\n",
      "brackets [31m and ] and \\ stay\n",
      "\n\n\n",
    ]
  ) {
    assert.equal(stripAnsi(text), text);
  }
});

Deno.test("stripAnsi: CSI sequences, with private parameters and the 8-bit form", () => {
  assert.equal(stripAnsi(`${ESC}[31mred${ESC}[0m`), "red");
  assert.equal(stripAnsi(`${ESC}[1;38;5;208mbold orange${ESC}[m`), "bold orange");
  assert.equal(stripAnsi(`${ESC}[38:2:1:2:3mcolon${ESC}[39m`), "colon");
  assert.equal(stripAnsi(`${ESC}[?25lhidden cursor${ESC}[?25h`), "hidden cursor");
  assert.equal(stripAnsi(`${ESC}[?1049h${ESC}[H${ESC}[2Jscreen`), "screen");
  assert.equal(stripAnsi(`a${ESC}[3Ab${ESC}[10;20Hc${ESC}[ qd`), "abcd");
  assert.equal(stripAnsi(`${ESC}[>0c${ESC}[=5u~`), "~");
  assert.equal(stripAnsi("\x9b31mred\x9b0m"), "red");
});

Deno.test("stripAnsi: OSC strings end at BEL or ST; a hyperlink keeps its text", () => {
  assert.equal(stripAnsi(`${ESC}]0;my title\x07prompt$ `), "prompt$ ");
  assert.equal(stripAnsi(`${ESC}]2;title${ESC}\\x`), "x");
  assert.equal(
    stripAnsi(`see ${ESC}]8;id=1;https://example.com/a?b=c${ESC}\\the docs${ESC}]8;;${ESC}\\.\n`),
    "see the docs.\n",
  );
  assert.equal(stripAnsi(`${ESC}]8;;file:///x\x07name${ESC}]8;;\x07`), "name");
  assert.equal(stripAnsi("\x9d0;title\x9cx"), "x");
  assert.equal(stripAnsi(`${ESC}]133;A${ESC}\\$ ls\n`), "$ ls\n");
  // Newlines inside the string belong to it.
  assert.equal(stripAnsi(`${ESC}]0;two\nlines\x07x`), "x");
});

Deno.test("stripAnsi: DCS, SOS, PM and APC strings end at ST only", () => {
  assert.equal(stripAnsi(`${ESC}Pq#0;2;0;0;0#0~~@@${ESC}\\after`), "after");
  assert.equal(stripAnsi(`${ESC}P$q"p${ESC}\\x`), "x");
  assert.equal(stripAnsi(`${ESC}Xsos\x07still${ESC}\\x`), "x");
  assert.equal(stripAnsi(`${ESC}^pm${ESC}\\x`), "x");
  assert.equal(stripAnsi(`${ESC}_Gf=24;AAAA${ESC}\\image`), "image");
  assert.equal(stripAnsi("\x90dcs\x9cx"), "x");
});

Deno.test("stripAnsi: other escape sequences, with intermediates", () => {
  assert.equal(stripAnsi(`${ESC}=${ESC}>keypad`), "keypad");
  assert.equal(stripAnsi(`${ESC}Mup ${ESC}7save${ESC}8`), "up save");
  assert.equal(stripAnsi(`${ESC}(Bcharset${ESC})0${ESC}(0x`), "charsetx");
  assert.equal(stripAnsi(`${ESC}#8${ESC}%Gok`), "ok");
  assert.equal(stripAnsi(`${ESC}cstart`), "start");
  assert.equal(stripAnsi(`lone ST ${ESC}\\`), "lone ST ");
});

Deno.test("stripAnsi: carriage returns overwrite the line; CRLF is a newline", () => {
  assert.equal(stripAnsi("10%\r20%\r30%\n"), "30%\n");
  assert.equal(stripAnsi("abcdef\rxy"), "xycdef");
  assert.equal(stripAnsi("abcdef\rxy\n"), "xycdef\n");
  assert.equal(stripAnsi("a\r\nb\r\n"), "a\nb\n");
  assert.equal(stripAnsi("a\r\r\nb"), "a\nb");
  assert.equal(stripAnsi("done\r"), "done");
  assert.equal(stripAnsi("one\ntwo\rTWO\nthree"), "one\nTWO\nthree");
  assert.equal(stripAnsi("\rx"), "x");
});

Deno.test("stripAnsi: backspace steps back and drops the last character", () => {
  assert.equal(stripAnsi("abc\bd"), "abd");
  assert.equal(stripAnsi("abc\b \b"), "ab");
  assert.equal(stripAnsi("ab\b\b\b\bx"), "x");
  assert.equal(stripAnsi("abcdef\rxy\bz"), "xzcdef");
  assert.equal(stripAnsi("\bx"), "x");
});

Deno.test("stripAnsi: erase in line and go to column act on the line", () => {
  assert.equal(stripAnsi(`50%\r${ESC}[K5%`), "5%");
  assert.equal(stripAnsi(`50%\r${ESC}[0K5%`), "5%");
  // EL 1 blanks the line up to and including the cursor.
  assert.equal(stripAnsi(`abcdef${ESC}[3G${ESC}[1KX`), "  Xdef");
  assert.equal(stripAnsi(`abcdef${ESC}[2K${ESC}[1Gdone`), "done");
  assert.equal(stripAnsi(`abc${ESC}[Gx`), "xbc");
  assert.equal(stripAnsi(`a${ESC}[4Gb`), "a  b");
  assert.equal(stripAnsi(`abc${ESC}[?2K${ESC}[1;2Gx`), "abcx", "other forms only vanish");
});

Deno.test("stripAnsi: other controls vanish; broken sequences end as a terminal ends them", () => {
  assert.equal(
    stripAnsi("bell\x07 nul\x00 del\x7f vt\x0b ff\x0c so\x0e\x0f c1\x85\n"),
    "bell nul del vt ff so c1\n",
  );
  assert.equal(stripAnsi(`${ESC}\nnext`), "\nnext", "ESC before a newline");
  assert.equal(stripAnsi(`${ESC}[12\nnext`), "\nnext", "CSI broken by a newline");
  assert.equal(stripAnsi(`${ESC}[31${ESC}[32mgreen`), "green");
  assert.equal(stripAnsi(`${ESC}[31\x18text`), "text", "CAN cancels");
  assert.equal(stripAnsi(`${ESC}]0;title\x1atext`), "text", "SUB cancels");
  assert.equal(stripAnsi(`${ESC}]0;title${ESC}[1mtext`), "text", "ESC ends a string");
  assert.equal(stripAnsi(`${ESC}é`), "é");
  assert.equal(stripAnsi(`text${ESC}[`), "text", "an unfinished sequence is dropped");
  assert.equal(stripAnsi(`text${ESC}]0;never ends`), "text");
});

/** A bit of everything, to cut into chunks. */
const SAMPLE = [
  `${ESC}]0;build${ESC}\\${ESC}[?25l`,
  `${ESC}[1;32m✓${ESC}[0m compiled 😀 ok\r\n`,
  "10%\r20%\r\x9b1m30%\x9b0m\n",
  `see ${ESC}]8;;https://x.test\x07docs${ESC}]8;;\x07\tnow\n`,
  `${ESC}Pq#0;2${ESC}\\${ESC}(B${ESC}=abc\b \bd\r\n`,
  `50%${ESC}[1G${ESC}[K5%\nabcdef\rxy`,
].join("");

Deno.test("AnsiStripper: a chunk may end anywhere, even inside a sequence", () => {
  const whole = stripAnsi(SAMPLE);
  assert.equal(
    whole,
    "✓ compiled 😀 ok\n30%\nsee docs\tnow\nabd\n5%\nxycdef",
  );
  for (let cut = 0; cut <= SAMPLE.length; cut++) {
    const stripper = new AnsiStripper();
    const got = stripper.push(SAMPLE.slice(0, cut)) + stripper.push(SAMPLE.slice(cut)) +
      stripper.flush();
    assert.equal(got, whole, `cut at ${cut}`);
  }
  for (let a = 0; a <= SAMPLE.length; a += 3) {
    for (let b = a; b <= SAMPLE.length; b += 2) {
      const stripper = new AnsiStripper();
      const got = [SAMPLE.slice(0, a), SAMPLE.slice(a, b), SAMPLE.slice(b)]
        .map((chunk) => stripper.push(chunk)).join("") + stripper.flush();
      assert.equal(got, whole, `cuts at ${a} and ${b}`);
    }
  }
  const byChar = new AnsiStripper();
  assert.equal([...SAMPLE].map((ch) => byChar.push(ch)).join("") + byChar.flush(), whole);
});

Deno.test("AnsiStripper: finished lines come out at once, the unfinished one waits", () => {
  const stripper = new AnsiStripper();
  assert.equal(stripper.push(`${ESC}[32mok${ESC}`), "");
  assert.equal(stripper.push("[0m\n 10%\r"), "ok\n");
  assert.equal(stripper.peek(), " 10%");
  assert.equal(stripper.push(" 50%"), "");
  assert.equal(stripper.peek(), " 50%");
  assert.equal(stripper.push("\r"), "");
  assert.equal(stripper.push("\n"), " 50%\n", "a CR then LF in the next chunk is one newline");
  assert.equal(stripper.push("Password: "), "");
  assert.equal(stripper.flush(), "Password: ");
  assert.equal(stripper.flush(), "");
});

Deno.test("AnsiStripper: flush drops an unfinished sequence and starts afresh", () => {
  const stripper = new AnsiStripper();
  assert.equal(stripper.push(`a${ESC}]0;tit`), "");
  assert.equal(stripper.flush(), "a");
  assert.equal(stripper.push("le\n"), "le\n");
});

Deno.test("AnsiStripper: a surrogate pair split between chunks stays one character", () => {
  const stripper = new AnsiStripper();
  const [high, low] = ["😀"[0], "😀"[1]];
  assert.equal(stripper.push(`a${high}`) + stripper.push(`${low}b\rX`), "");
  assert.equal(stripper.flush(), "X😀b");
});

Deno.test("AnsiStripper: a line longer than maxLineLength is let go at that length", () => {
  const stripper = new AnsiStripper({ maxLineLength: 4 });
  assert.equal(stripper.push("abcdef"), "abcd");
  assert.equal(stripper.push("\rX\n"), "Xf\n", "the CR goes back to the wrapped part only");
  assert.equal(stripAnsi("x".repeat(20_000) + "\r!").length, 20_000);
  assert.throws(() => new AnsiStripper({ maxLineLength: 0 }), /positive integer, got 0/);
});
