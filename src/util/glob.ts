/**
 * Glob patterns for slash-separated relative paths, as search and exclude
 * lists take them: `*`, `?`, `**` segments, `[...]` classes, `{a,b}`
 * braces and `\` escapes. Each pattern is compiled to one RegExp up front,
 * so matching a long list of paths costs one regex test each.
 *
 * The rules, where globs differ from one tool to the next:
 *
 * - A pattern with no `/` matches the last segment (the basename) at any
 *   depth, as in `.gitignore`: `*.ts` matches `a.ts` and `a/b/c.ts`. A
 *   pattern with a `/` matches the whole path from its start: `src/*.ts`
 *   matches `src/a.ts` only. A leading `/` anchors a one-segment pattern
 *   (`/README.md` matches `README.md` but not `docs/README.md`). Braces
 *   expand first, so the rule applies to each alternative on its own.
 * - `**` as a whole segment matches zero or more segments: `src/**\/*.ts`
 *   matches `src/a.ts` and `src/x/y/a.ts`, and `a/**` matches `a` itself
 *   and all below it. Elsewhere `**` is just `*`.
 * - `*`, `?` and classes never match `/`. Dotfiles get no special case:
 *   `*` matches `.env`.
 * - `{a,b}` is an alternation and may nest; `{a}` is just `a`, and `{,x}`
 *   matches nothing or `x`. A `}` that closes no `{` is literal. In `[...]`, `!` or `^` first negates, `]`
 *   first is literal, `a-z` is a range.
 * - `\` makes the next character literal. Matching is case-sensitive, and
 *   paths are taken as given (no `./` or `\` normalisation).
 *
 * @module
 */

/** The most alternatives a pattern's braces may expand to, so a pattern cannot blow up. */
const MAX_ALTERNATIVES = 4096;

/**
 * The index of the `]` that closes the class opened at `open` in `text`
 * (a piece of `pattern`); throws when there is none.
 */
function classEnd(pattern: string, text: string, open: number): number {
  let i = open + 1;
  if (text[i] === "!" || text[i] === "^") i++;
  // A `]` right after the opening (or its negation) is a member, not the end.
  if (text[i] === "]") i++;
  for (; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === "]") return i;
  }
  throw new SyntaxError(`pattern ${JSON.stringify(pattern)} has an unclosed "["`);
}

/**
 * The top-level brace group of `text` (a piece of `pattern`): where it
 * opens and closes and where its commas are, or undefined without one.
 */
function braceGroup(
  pattern: string,
  text: string,
): { open: number; close: number; commas: number[] } | undefined {
  let depth = 0, open = -1;
  let commas: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") i++;
    else if (ch === "[") i = classEnd(pattern, text, i);
    else if (ch === "{") {
      if (depth++ === 0) open = i, commas = [];
    } else if (ch === "}" && depth > 0) {
      // A `}` with no `{` before it is literal, as a stray `]` is.
      if (--depth === 0) return { open, close: i, commas };
    } else if (ch === "," && depth === 1) commas.push(i);
  }
  if (depth > 0) throw new SyntaxError(`pattern ${JSON.stringify(pattern)} has an unclosed "{"`);
  return undefined;
}

/** Every brace-free pattern that the braces of `text` stand for, in order. */
function expandBraces(pattern: string, text: string): string[] {
  const group = braceGroup(pattern, text);
  if (!group) return [text];
  const { open, close, commas } = group;
  const bounds = [open, ...commas, close];
  const choices: string[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    choices.push(...expandBraces(pattern, text.slice(bounds[i] + 1, bounds[i + 1])));
  }
  const prefix = text.slice(0, open);
  const rests = expandBraces(pattern, text.slice(close + 1));
  if (choices.length * rests.length > MAX_ALTERNATIVES) {
    throw new RangeError(
      `pattern ${JSON.stringify(pattern)} expands to more than ${MAX_ALTERNATIVES} alternatives`,
    );
  }
  return choices.flatMap((choice) => rests.map((rest) => prefix + choice + rest));
}

/** `ch` as a regex atom that matches exactly it (unicode mode). */
function literal(ch: string): string {
  return /^[A-Za-z0-9_]$/.test(ch) ? ch : `\\u{${ch.codePointAt(0)!.toString(16)}}`;
}

/** The members of a class body, one per character, `bare` when written without `\\`. */
function classMembers(body: string): { ch: string; bare: boolean }[] {
  const out: { ch: string; bare: boolean }[] = [];
  for (let i = 0; i < body.length; i++) {
    const bare = body[i] !== "\\";
    if (!bare) i++;
    const ch = String.fromCodePoint(body.codePointAt(i)!);
    i += ch.length - 1;
    out.push({ ch, bare });
  }
  return out;
}

/** The regex for the class `text` (from `[` to `]`), never matching `/`. */
function classRegex(pattern: string, text: string): string {
  const negated = text[1] === "!" || text[1] === "^";
  const members = classMembers(text.slice(negated ? 2 : 1, -1));
  let out = "";
  for (let k = 0; k < members.length; k++) {
    const dash = members[k + 1];
    if (dash?.bare && dash.ch === "-" && k + 2 < members.length) {
      const from = members[k].ch, to = members[k + 2].ch;
      if (from.codePointAt(0)! > to.codePointAt(0)!) {
        throw new SyntaxError(
          `pattern ${JSON.stringify(pattern)} has a reversed range "${from}-${to}"`,
        );
      }
      out += `${literal(from)}-${literal(to)}`;
      k += 2;
    } else out += literal(members[k].ch);
  }
  return `(?!/)[${negated ? "^" : ""}${out}]`;
}

/** The regex for one segment of a brace-free pattern (not a `**` segment). */
function segmentRegex(pattern: string, segment: string): string {
  let out = "";
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i];
    if (ch === "*") out += "[^/]*";
    else if (ch === "?") out += "[^/]";
    else if (ch === "[") {
      const end = classEnd(pattern, segment, i);
      out += classRegex(pattern, segment.slice(i, end + 1));
      i = end;
    } else {
      if (ch === "\\") i++;
      const cp = segment.codePointAt(i)!;
      if (cp > 0xffff) i++;
      out += literal(String.fromCodePoint(cp));
    }
  }
  return out;
}

/** The segments of a brace-free pattern, split at each `/` outside classes and escapes. */
function segments(pattern: string, alternative: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < alternative.length; i++) {
    if (alternative[i] === "\\") {
      if (i + 1 === alternative.length) {
        throw new SyntaxError(`pattern ${JSON.stringify(pattern)} ends with a lone "\\"`);
      }
      i++;
    } else if (alternative[i] === "[") i = classEnd(pattern, alternative, i);
    else if (alternative[i] === "/") {
      out.push(alternative.slice(start, i));
      start = i + 1;
    }
  }
  out.push(alternative.slice(start));
  return out;
}

/** The regex (unanchored) for one brace-free alternative of `pattern`. */
function alternativeRegex(pattern: string, alternative: string): string {
  const anchored = alternative.startsWith("/");
  const parts = segments(pattern, anchored ? alternative.slice(1) : alternative)
    .filter((part, i, all) => !(part === "**" && all[i - 1] === "**"));
  if (parts.length > 1 && parts[parts.length - 1] === "") {
    throw new SyntaxError(
      `pattern ${JSON.stringify(pattern)} ends with "/"; paths never do (use "dir" or "dir/**")`,
    );
  }
  // The basename rule: a single segment may sit at any depth.
  let out = !anchored && parts.length === 1 && parts[0] !== "**" ? "(?:.*/)?" : "";
  let needSlash = false;
  parts.forEach((part, i) => {
    if (part !== "**") {
      out += (needSlash ? "/" : "") + segmentRegex(pattern, part);
      needSlash = true;
    } else if (i < parts.length - 1) {
      out += (needSlash ? "/" : "") + "(?:.*/)?";
      needSlash = false;
    } else {
      out += needSlash ? "(?:/.*)?" : ".*";
    }
  });
  return out;
}

/**
 * A test of relative paths against the glob `pattern` (rules in the
 * module doc). Throws a `SyntaxError` naming the pattern when a `[` or
 * `{` is not closed, a range is reversed, or the pattern is empty or
 * ends with `/` or a lone `\`; a `RangeError` when its braces expand to
 * more than 4096 alternatives.
 *
 * @example
 * ```ts
 * import { globMatcher } from "./glob.ts";
 * const isSource = globMatcher("src/**\/*.{ts,tsx}");
 * isSource("src/a.ts"); // true
 * isSource("src/ui/App.tsx"); // true
 * isSource("test/a.ts"); // false
 * globMatcher("*.md")("docs/guide/intro.md"); // true: no "/", so any depth
 * ```
 */
export function globMatcher(pattern: string): (relativePath: string) => boolean {
  if (pattern === "") throw new SyntaxError(`glob pattern "" is empty`);
  const alternatives = expandBraces(pattern, pattern).map((alt) => alternativeRegex(pattern, alt));
  const regex = new RegExp(`^(?:${alternatives.join("|")})$`, "u");
  return (relativePath) => regex.test(relativePath);
}

/**
 * A test of whether a path matches any of `patterns` (each compiled once
 * by {@link globMatcher}, so a bad one throws here); an empty list matches
 * nothing, as an exclude list should.
 *
 * @example
 * ```ts
 * import { anyGlob } from "./glob.ts";
 * const excluded = anyGlob(["node_modules/**", "*.log"]);
 * excluded("node_modules/x/index.js"); // true
 * excluded("logs/today.log"); // true
 * excluded("src/main.ts"); // false
 * anyGlob([])("anything"); // false
 * ```
 */
export function anyGlob(patterns: string[]): (relativePath: string) => boolean {
  const matchers = patterns.map(globMatcher);
  return (relativePath) => matchers.some((matches) => matches(relativePath));
}
