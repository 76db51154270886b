import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { unifiedDiff } from "./unified_diff.ts";

/** What `diff -U context` prints after its two header lines, or undefined without `diff`. */
function systemDiff(oldText: string, newText: string, context = 3): string | undefined {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeFileSync(`${dir}/old`, new TextEncoder().encode(oldText));
    Deno.writeFileSync(`${dir}/new`, new TextEncoder().encode(newText));
    const run = spawnSync("diff", [`-U${context}`, `${dir}/old`, `${dir}/new`], {
      encoding: "utf8",
    });
    if (run.error || run.status === 2) return undefined;
    return run.stdout.split("\n").slice(2).join("\n");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/** Our diff after its two header lines. */
function body(oldText: string, newText: string, context = 3): string {
  return unifiedDiff(oldText, newText, { context }).split("\n").slice(2).join("\n");
}

const lines = (from: number, to: number, tag = "line") =>
  Array.from({ length: to - from + 1 }, (_, i) => `${tag} ${from + i}\n`).join("");

/** Old text, new text, and the context to use; each compared with `diff -u`. */
const CASES: Record<string, [string, string, number?]> = {
  "insert at start": [lines(1, 8), "new\n" + lines(1, 8)],
  "insert in the middle": [lines(1, 8), lines(1, 4) + "new\n" + lines(5, 8)],
  "insert at end": [lines(1, 8), lines(1, 8) + "new 1\nnew 2\n"],
  "delete": [lines(1, 10), lines(1, 4) + lines(7, 10)],
  "replace": [lines(1, 10), lines(1, 4) + "five\nsix\nseven\n" + lines(7, 10)],
  "two hunks": [lines(1, 30), lines(1, 4) + "X\n" + lines(6, 24) + "Y\n" + lines(26, 30)],
  "merged: six lines apart": [
    lines(1, 20),
    lines(1, 5) + "X\n" + lines(7, 12) + "Y\n" + lines(14, 20),
  ],
  "apart: seven lines apart": [
    lines(1, 20),
    lines(1, 5) + "X\n" + lines(7, 13) + "Y\n" + lines(15, 20),
  ],
  "no newline, old side": [lines(1, 5) + "tail", lines(1, 5) + "tail\n"],
  "no newline, new side": [lines(1, 5) + "tail\n", lines(1, 5) + "tail"],
  "no newline, both sides": [lines(1, 5) + "tail", lines(1, 2) + "x\n" + lines(4, 5) + "tail"],
  "no newline, last line changed": [lines(1, 5) + "tail", lines(1, 5) + "end"],
  "empty old": ["", "a\nb\n"],
  "empty new": ["a\nb\n", ""],
  "empty old, no newline": ["", "only"],
  "CRLF lines": ["one\r\ntwo\r\nthree\r\n", "one\r\ntwo!\r\nthree\r\n"],
  "CRLF against LF": ["one\r\ntwo\r\n", "one\ntwo\r\n"],
  "context 0": [lines(1, 10), lines(1, 3) + lines(5, 7) + "x\n" + lines(8, 10), 0],
  "context 1, merged": [lines(1, 10), lines(1, 3) + "x\n" + lines(5, 5) + "y\n" + lines(7, 10), 1],
  "context 10": [lines(1, 40), lines(1, 19) + "x\n" + lines(21, 40), 10],
  "whole replacement": ["a\nb\nc\n", "x\ny\n"],
};

for (const [name, [oldText, newText, context]] of Object.entries(CASES)) {
  Deno.test(`unifiedDiff: as diff -u prints it: ${name}`, () => {
    const expected = systemDiff(oldText, newText, context);
    if (expected === undefined) return;
    assert.equal(body(oldText, newText, context), expected);
  });
}

Deno.test("unifiedDiff: header, hunk counts and conventions", () => {
  assert.equal(
    unifiedDiff("a\nb\nc\n", "a\nB\nc\n", { path: "src/x.ts" }),
    "--- a/src/x.ts\n+++ b/src/x.ts\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
  );
  assert.equal(unifiedDiff("", "a\nb\n"), "--- a/file\n+++ b/file\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  assert.equal(unifiedDiff("a\n", ""), "--- a/file\n+++ b/file\n@@ -1 +0,0 @@\n-a\n");
  assert.equal(
    unifiedDiff(lines(1, 5), lines(1, 2) + lines(4, 5), { context: 0 }),
    "--- a/file\n+++ b/file\n@@ -3 +2,0 @@\n-line 3\n",
  );
  assert.equal(
    unifiedDiff("x", "x\n"),
    "--- a/file\n+++ b/file\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n",
  );
});

Deno.test("unifiedDiff: hunks merge when their contexts touch, not when a line lies between", () => {
  const hunks = (text: string) => text.split("\n").filter((l) => l.startsWith("@@"));
  const touching = lines(1, 5) + "X\n" + lines(7, 12) + "Y\n" + lines(14, 20);
  assert.deepEqual(hunks(unifiedDiff(lines(1, 20), touching)), ["@@ -3,14 +3,14 @@"]);
  const apart = lines(1, 5) + "X\n" + lines(7, 13) + "Y\n" + lines(15, 20);
  assert.deepEqual(hunks(unifiedDiff(lines(1, 20), apart)), [
    "@@ -3,7 +3,7 @@",
    "@@ -11,7 +11,7 @@",
  ]);
});

Deno.test("unifiedDiff: equal texts give nothing; CR stays verbatim", () => {
  assert.equal(unifiedDiff("", ""), "");
  assert.equal(unifiedDiff("a\r\nb", "a\r\nb"), "");
  assert.equal(
    unifiedDiff("a\r\nb\r\n", "a\r\nc\r\n"),
    "--- a/file\n+++ b/file\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n",
  );
});

Deno.test("unifiedDiff: bad options name the value", () => {
  assert.throws(() => unifiedDiff("a", "b", { context: -1 }), /non-negative integer, got -1/);
  assert.throws(() => unifiedDiff("a", "b", { context: 1.5 }), /got 1\.5/);
  assert.throws(() => unifiedDiff("a", "b", { path: "x\ny" }), /path "x\\ny"/);
});

/** The new text that applying `patch` to `oldText` gives; throws when a line does not match. */
function applyPatch(oldText: string, patch: string): string {
  const old = oldText.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const rows = patch.split("\n").slice(2, -1);
  const out: string[] = [];
  let at = 0;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    const header = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@$/.exec(row);
    if (header) {
      const start = Number(header[1]) - (header[2] === "0" ? 0 : 1);
      while (at < start) out.push(old[at++]);
      continue;
    }
    const noNewline = rows[r + 1] === "\\ No newline at end of file";
    const text = row.slice(1) + (noNewline ? "" : "\n");
    if (noNewline) r++;
    if (row[0] !== "+") assert.equal(old[at++], text, `patch row ${r}`);
    if (row[0] !== "-") out.push(text);
  }
  while (at < old.length) out.push(old[at++]);
  return out.join("");
}

/** The length of a longest common subsequence of two line lists, by dynamic programming. */
function lcsLength(a: string[], b: string[]): number {
  let row = new Array(b.length + 1).fill(0);
  for (const x of a) {
    const next = [0];
    for (let j = 0; j < b.length; j++) {
      next.push(x === b[j] ? row[j] + 1 : Math.max(row[j + 1], next[j]));
    }
    row = next;
  }
  return row[b.length];
}

Deno.test("unifiedDiff: random texts: the patch applies and is a shortest one", () => {
  let seed = 12345;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const text = () => {
    const count = random(12);
    const parts = Array.from({ length: count }, () => "abcd"[random(4)] + "\n");
    if (count > 0 && random(4) === 0) parts[count - 1] = parts[count - 1].slice(0, -1);
    return parts.join("");
  };
  for (let round = 0; round < 600; round++) {
    const a = text(), b = text(), context = random(4);
    const patch = unifiedDiff(a, b, { context });
    if (a === b) {
      assert.equal(patch, "");
      continue;
    }
    assert.equal(applyPatch(a, patch), b, JSON.stringify({ a, b, context }));
    const split = (s: string) => s.match(/[^\n]*\n|[^\n]+$/g) ?? [];
    const edits = patch.split("\n").filter((l) => /^[-+](?![-+]{2} [ab]\/)/.test(l)).length;
    const [la, lb] = [split(a), split(b)];
    assert.equal(edits, la.length + lb.length - 2 * lcsLength(la, lb), JSON.stringify({ a, b }));
  }
});

Deno.test("unifiedDiff: a 20,000-line file with three edits", () => {
  const oldText = lines(1, 20000);
  const newText = lines(1, 999) + "edited\n" + lines(1001, 9999) + "inserted\n" +
    lines(10000, 17999) + lines(18001, 20000);
  const patch = unifiedDiff(oldText, newText);
  assert.equal(patch.split("\n").filter((l) => l.startsWith("@@")).length, 3);
  assert.equal(applyPatch(oldText, patch), newText);
});

Deno.test("unifiedDiff: texts with nothing in common still diff, in linear memory", () => {
  const oldText = lines(1, 3000, "old"), newText = lines(1, 3000, "new");
  const patch = unifiedDiff(oldText, newText);
  assert.ok(patch.startsWith("--- a/file\n+++ b/file\n@@ -1,3000 +1,3000 @@\n-old 1\n"));
  assert.equal(applyPatch(oldText, patch), newText);
});

Deno.test("unifiedDiff: long texts with many edits: the patch applies and is a shortest one", () => {
  let seed = 99;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const oldLines = Array.from({ length: 1500 }, () => `${random(8)}\n`);
  const newLines = Array.from({ length: 1400 }, () => `${random(8)}\n`);
  const [oldText, newText] = [oldLines.join(""), newLines.join("")];
  const patch = unifiedDiff(oldText, newText);
  assert.equal(applyPatch(oldText, patch), newText);
  const edits = patch.split("\n").slice(2).filter((l) => /^[-+]/.test(l)).length;
  assert.equal(edits, 1500 + 1400 - 2 * lcsLength(oldLines, newLines));
});
