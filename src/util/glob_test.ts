import assert from "node:assert/strict";
import { anyGlob, globMatcher } from "./glob.ts";

/** Asserts that `pattern` matches each of `yes` and none of `no`. */
function check(pattern: string, yes: string[], no: string[]): void {
  const matches = globMatcher(pattern);
  for (const path of yes) assert.equal(matches(path), true, `${pattern} should match ${path}`);
  for (const path of no) assert.equal(matches(path), false, `${pattern} should not match ${path}`);
}

Deno.test("globMatcher: * and ? stay within one segment", () => {
  check("src/*.ts", ["src/a.ts", "src/.ts", "src/a.b.ts"], ["src/x/a.ts", "a.ts", "src/a.tsx"]);
  check("src/?.ts", ["src/a.ts", "src/é.ts", "src/😀.ts"], ["src/ab.ts", "src/.ts", "src//.ts"]);
  check("a*b", ["ab", "axxb", "x/ab"], ["a/b", "abc"]);
  check("src/*", ["src/a", "src/.env"], ["src", "src/a/b"]);
});

Deno.test("globMatcher: ** as a whole segment is zero or more segments", () => {
  check("src/**/*.ts", ["src/a.ts", "src/x/a.ts", "src/x/y/a.ts"], ["a.ts", "lib/src/a.ts"]);
  check("**/test", ["test", "a/test", "a/b/test"], ["a/test/x", "atest", "a/btest"]);
  check("a/**", ["a", "a/b", "a/b/c", "a/.git"], ["ab", "b/a"]);
  check("a/**/b", ["a/b", "a/x/b", "a/x/y/b"], ["a/xb", "ab", "a/b/c"]);
  check("**", ["a", "a/b/c", ".hidden/x"], []);
  check("a/**/**/b", ["a/b", "a/x/y/b"], ["a/x/c"]);
  // Not a whole segment: the same as a single star.
  check("a**b", ["ab", "axyb"], ["a/b", "ax/yb"]);
  check("src/**.ts", ["src/a.ts"], ["src/x/a.ts"]);
});

Deno.test("globMatcher: a pattern without / matches the basename at any depth", () => {
  check("*.ts", ["a.ts", "a/b/c.ts", ".ts"], ["a.tsx", "a.ts/b"]);
  check("node_modules", ["node_modules", "a/node_modules"], ["node_modules/x", "xnode_modules"]);
  check(".env", [".env", "config/.env"], ["x.env"]);
  // A slash anywhere anchors the pattern at the start of the path.
  check("src/a.ts", ["src/a.ts"], ["x/src/a.ts"]);
  // A leading slash anchors a one-segment pattern.
  check("/README.md", ["README.md"], ["docs/README.md"]);
  check("/src/*.ts", ["src/a.ts"], ["x/src/a.ts"]);
});

Deno.test("globMatcher: dotfiles get no special case", () => {
  check("*", [".env", ".git", "a"], []);
  check("src/**", ["src/.cache/x"], []);
  check("?git", [".git"], []);
});

Deno.test("globMatcher: character classes", () => {
  check("[abc].ts", ["a.ts", "c.ts"], ["d.ts", "ab.ts"]);
  check("[a-c][0-9]", ["a0", "c9"], ["d0", "a", "aa"]);
  check("[!x]", ["a", "y"], ["x", "ab"]);
  check("[^x]", ["a"], ["x"]);
  check("[]a]", ["]", "a"], ["b"]);
  check("[!]a]", ["b"], ["]", "a"]);
  check("[a-]", ["a", "-"], ["b"]);
  check("[-a]", ["a", "-"], ["b"]);
  check("[a\\-z]", ["a", "-", "z"], ["b"]);
  check("[\\]]", ["]"], ["\\"]);
  check("[*?{]", ["*", "?", "{"], ["a"]);
  check("[.]*", [".env"], ["env"]);
  check("x[/]y", [], ["x/y"]);
  check("x[!a]y", ["xby"], ["x/y", "xay"]);
  check("[😀-😂]", ["😁"], ["😃"]);
});

Deno.test("globMatcher: braces alternate, nest, and may be empty", () => {
  check("*.{ts,tsx}", ["a.ts", "b/a.tsx"], ["a.js", "a.{ts,tsx}"]);
  check("a.{js{,x},ts}", ["a.js", "a.jsx", "a.ts"], ["a.tsx", "a."]);
  check("{src,lib}/**/*.ts", ["src/a.ts", "lib/x/a.ts"], ["test/a.ts", "x/src/a.ts"]);
  check("file{,.bak}", ["file", "file.bak", "d/file"], ["file.", "file.baks"]);
  check("{a}", ["a"], ["{a}"]);
  check("{a,b}{1,2}", ["a1", "a2", "b1", "b2"], ["ab", "12"]);
  check("{[,],x}", [",", "x"], ["]", "[,]"]);
  check("a}", ["a}"], ["a"]);
  // Each alternative follows the basename rule on its own.
  check("{*.md,docs/*}", ["a/b.md", "docs/x"], ["a/docs/x"]);
});

Deno.test("globMatcher: backslash makes the next character literal", () => {
  check("\\*.md", ["*.md", "d/*.md"], ["a.md"]);
  check("a\\?", ["a?"], ["ab"]);
  check("\\[x]", ["[x]"], ["x"]);
  check("\\{a,b}", ["{a,b}"], ["a", "b"]);
  check("a\\\\b", ["a\\b"], ["ab"]);
  check("\\a", ["a"], ["\\a"]);
});

Deno.test("globMatcher: regex characters are literal", () => {
  check("a.b", ["a.b"], ["axb"]);
  check("(x)+|y$", ["(x)+|y$"], ["x", "y"]);
  check("a^b", ["a^b"], []);
  check("é ü", ["é ü"], ["e u"]);
});

Deno.test("globMatcher: bad patterns throw a SyntaxError naming the pattern", () => {
  const bad: [string, RegExp][] = [
    ["src/[abc", /pattern "src\/\[abc" has an unclosed "\["/],
    ["[!]", /pattern "\[!\]" has an unclosed "\["/],
    ["*.{ts,js", /pattern "\*\.\{ts,js" has an unclosed "\{"/],
    ["{a,{b}", /unclosed "\{"/],
    ["[z-a]", /pattern "\[z-a\]" has a reversed range "z-a"/],
    ["a\\", /pattern "a\\\\" ends with a lone "\\"/],
    ["dir/", /pattern "dir\/" ends with "\/"/],
    ["", /pattern "" is empty/],
  ];
  for (const [pattern, message] of bad) {
    assert.throws(() => globMatcher(pattern), (e: unknown) => {
      assert.ok(e instanceof SyntaxError, `${pattern}: ${e}`);
      assert.match(e.message, message);
      return true;
    });
  }
  assert.throws(() => globMatcher("{a,b,c,d}".repeat(7)), /more than 4096 alternatives/);
});

Deno.test("globMatcher: case-sensitive, paths taken as given", () => {
  check("*.TS", ["a.TS"], ["a.ts"]);
  check("src/*.ts", ["src/a.ts"], ["./src/a.ts", "src\\a.ts"]);
});

Deno.test("anyGlob: matches when any pattern does; an empty list matches nothing", () => {
  const excluded = anyGlob(["node_modules/**", "*.log", "/dist"]);
  assert.equal(excluded("node_modules"), true);
  assert.equal(excluded("node_modules/x/index.js"), true);
  assert.equal(excluded("logs/today.log"), true);
  assert.equal(excluded("dist"), true);
  assert.equal(excluded("src/dist"), false);
  assert.equal(excluded("src/main.ts"), false);
  assert.equal(anyGlob([])("anything"), false);
  assert.equal(anyGlob([])(""), false);
  assert.throws(() => anyGlob(["ok", "[bad"]), /pattern "\[bad" has an unclosed "\["/);
});
