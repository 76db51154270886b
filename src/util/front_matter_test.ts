import assert from "node:assert/strict";
import { parseFrontMatter } from "./front_matter.ts";

/** The front matter of a file whose lines are `lines` between `---` lines. */
const fm = (...lines: string[]) => parseFrontMatter(["---", ...lines, "---", "body"].join("\n"));

Deno.test("parseFrontMatter: plain pairs, the body after the closing line ignored", () => {
  assert.deepEqual(fm("name: alpha", "description: Does A"), {
    name: "alpha",
    description: "Does A",
  });
  // The first closing line ends it; what follows is body, even if it looks like more.
  assert.deepEqual(parseFrontMatter("---\nname: x\n---\nname: y\n---\n"), { name: "x" });
  // Spaces after the fences, and blank and comment lines inside, do not matter.
  assert.deepEqual(parseFrontMatter("---  \n# a comment\n\nname: x\n---  \n"), { name: "x" });
});

Deno.test("parseFrontMatter: text without front matter is undefined, an empty block is {}", () => {
  assert.equal(parseFrontMatter("no front matter"), undefined);
  assert.equal(parseFrontMatter(""), undefined);
  assert.equal(parseFrontMatter("---\nname: never closed\n"), undefined);
  assert.equal(parseFrontMatter(" ---\nname: x\n---\n"), undefined, "the fence starts the line");
  assert.deepEqual(parseFrontMatter("---\n---\nbody"), {});
  assert.deepEqual(parseFrontMatter("---\n\n---\n"), {});
});

Deno.test("parseFrontMatter: CRLF lines are read like LF", () => {
  assert.deepEqual(parseFrontMatter("---\r\nname: crlf\r\ndescription: d\r\n---\r\n"), {
    name: "crlf",
    description: "d",
  });
});

Deno.test("parseFrontMatter: quoted scalars lose their quotes and keep their escapes", () => {
  assert.deepEqual(fm('name: "q\\"uoted\\u0041"'), { name: 'q"uotedA' });
  assert.deepEqual(fm("name: 'it''s'"), { name: "it's" });
  assert.deepEqual(fm('description: "a: b # not a comment"'), {
    description: "a: b # not a comment",
  });
  // A quote never closed is taken as written.
  assert.deepEqual(fm('name: "unterminated'), { name: '"unterminated' });
});

Deno.test("parseFrontMatter: a comment ends a plain scalar only after white space", () => {
  assert.deepEqual(fm("description: d02 # comment", "url: http://x/#frag"), {
    description: "d02",
    url: "http://x/#frag",
  });
});

Deno.test("parseFrontMatter: what is not YAML it understands is kept as a plain string", () => {
  assert.deepEqual(fm("name: [unclosed"), { name: "[unclosed" });
  assert.deepEqual(fm("empty:", "name: x"), { empty: "", name: "x" });
  // A line that is not `key: value` is skipped.
  assert.deepEqual(fm("key_with.dots-and: v", "-bad: x", "just words"), {
    "key_with.dots-and": "v",
  });
});

Deno.test("parseFrontMatter: block scalars keep (|) or fold (>) their lines", () => {
  assert.deepEqual(fm("description: |", "  line1", "  line2"), { description: "line1\nline2" });
  // Indentation beyond the block's own is kept.
  assert.deepEqual(fm("d: |", "    indented", "      more", "    back"), {
    d: "indented\n  more\nback",
  });
  assert.deepEqual(fm("description: >", "  folded", "  text", "name: after"), {
    description: "folded text",
    name: "after",
  });
  assert.deepEqual(fm("description: >-", "  folded", "", "  para"), {
    description: "folded para",
  });
});

Deno.test("parseFrontMatter: a plain scalar continues on more indented lines", () => {
  assert.deepEqual(fm("description: multi", "  line plain", "name: n"), {
    description: "multi line plain",
    name: "n",
  });
});

Deno.test("parseFrontMatter: one level of nested mapping; deeper levels are strings", () => {
  const front = fm(
    "name: s10",
    "metadata:",
    '  short-description: "sd10"',
    "  other: x",
    "  nested:",
    "    deeper: y",
  );
  assert.deepEqual(front, {
    name: "s10",
    metadata: { "short-description": "sd10", other: "x", nested: "deeper: y" },
  });
});

Deno.test("parseFrontMatter: null, flow lists and flow mappings are no strings, as upstream reads them", () => {
  const front = parseFrontMatter(
    "---\nname: ~\ndescription: [a, b]\nmetadata: {short-description: short one, x: 'y'}\n" +
      "other: null\nkept: [unclosed\n---\n",
  );
  assert.deepEqual(front, {
    name: null,
    description: ["a", "b"],
    metadata: { "short-description": "short one", x: "y" },
    other: null,
    kept: "[unclosed",
  });
  // A byte order mark before the first line: no front matter at all.
  assert.equal(parseFrontMatter("\uFEFF---\nname: bom\ndescription: d\n---\n"), undefined);
});
