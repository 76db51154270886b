/**
 * The front matter of a `SKILL.md`: the block between a first line `---`
 * and the next line `---`, read as the small subset of YAML that skill
 * files use: `key: value` pairs, quoted or plain scalars, `|` and `>`
 * block scalars, and one level of nested mapping (`metadata:` with
 * indented pairs below it, or `{key: value}` on one line). `~` and `null`
 * are null, a complete `[a, b]` is a list, so that a field upstream's YAML
 * reader refuses as not a string is no string here either. Anything else
 * it cannot read is taken as a plain string, as upstream's reader does
 * (`name: [unclosed` is the name `[unclosed`). A byte order mark before
 * the first `---` means no front matter, as upstream sees it.
 *
 * @module
 */

/** A value of the front matter: a string, null, a list, or a mapping of strings. */
export type FrontMatterValue = string | null | string[] | { [key: string]: string };

/** The parsed front matter, or undefined when the text has none. */
export type FrontMatter = Record<string, FrontMatterValue>;

const PAIR = /^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$/;

/** A scalar as written: quotes removed (with their escapes), plain text trimmed. */
function scalar(raw: string): string {
  const text = raw.trim();
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    try {
      return JSON.parse(text);
    } catch {
      return text.slice(1, -1);
    }
  }
  if (text.length >= 2 && text.startsWith("'") && text.endsWith("'")) {
    return text.slice(1, -1).replaceAll("''", "'");
  }
  // A comment after a plain scalar is not part of it.
  const comment = text.search(/\s#/);
  return comment >= 0 ? text.slice(0, comment).trimEnd() : text;
}

/**
 * A plain value written on one line that YAML reads as no string: null,
 * a flow list or a flow mapping (of plain or quoted scalars); undefined
 * for anything else.
 */
function nonString(raw: string): FrontMatterValue | undefined {
  const text = raw.trim();
  if (/^(~|null|Null|NULL)$/.test(text)) return null;
  const items = (inner: string) =>
    inner.trim() === "" ? [] : inner.split(",").map((part) => scalar(part));
  if (/^\[[^\[\]{}]*\]$/.test(text)) return items(text.slice(1, -1));
  if (/^\{[^\[\]{}]*\}$/.test(text)) {
    const out: { [key: string]: string } = {};
    for (const pair of text.slice(1, -1).split(",")) {
      const colon = pair.indexOf(":");
      if (colon > 0) out[scalar(pair.slice(0, colon))] = scalar(pair.slice(colon + 1));
    }
    return out;
  }
  return undefined;
}

const indentOf = (line: string): number => line.length - line.trimStart().length;

/** The lines of a block scalar (`|` keeps newlines, `>` folds them). */
function block(lines: string[], style: string): string {
  const body = lines.filter((l, i) => l.trim() !== "" || i < lines.length - 1);
  const indent = Math.min(...body.filter((l) => l.trim() !== "").map(indentOf));
  const stripped = body.map((l) => l.slice(Number.isFinite(indent) ? indent : 0));
  return style.startsWith(">")
    ? stripped.join(" ").replace(/\s+\n?/g, " ").trim()
    : stripped.join("\n");
}

/** The indented lines below line `i` (those more indented than `parent`). */
function childLines(lines: string[], i: number, parent: number): string[] {
  const out: string[] = [];
  for (let j = i + 1; j < lines.length; j++) {
    if (lines[j].trim() !== "" && indentOf(lines[j]) <= parent) break;
    out.push(lines[j]);
  }
  return out;
}

/** Read `key: value` pairs at one indentation. */
function mapping(lines: string[], nested: boolean): FrontMatter {
  const out: FrontMatter = {};
  const base = Math.min(...lines.filter((l) => l.trim() !== "").map(indentOf));
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === "" || line.trimStart().startsWith("#") || indentOf(line) !== base) continue;
    const m = PAIR.exec(line.trim());
    if (!m) continue;
    const [, key, rest = ""] = m;
    const children = childLines(lines, i, indentOf(line));
    i += children.length;
    if (rest === "|" || rest === ">" || /^[|>][+-]?$/.test(rest)) {
      out[key] = block(children, rest);
    } else if (rest.trim() === "" && children.some((l) => l.trim() !== "") && !nested) {
      const inner = mapping(children, true);
      out[key] = Object.fromEntries(
        Object.entries(inner).map(([k, v]) => [k, typeof v === "string" ? v : ""]),
      );
    } else if (children.every((l) => l.trim() === "") && nonString(rest) !== undefined) {
      out[key] = nonString(rest)!;
    } else {
      // A plain scalar may continue on more indented lines.
      const more = children.map((l) => l.trim()).filter((l) => l !== "");
      out[key] = [scalar(rest), ...more].filter((s) => s !== "").join(" ");
    }
  }
  return out;
}

/**
 * The front matter of `text`, or undefined when it does not start with a
 * `---` line closed by another.
 *
 * @example
 * ```ts
 * import { parseFrontMatter } from "./front_matter.ts";
 * parseFrontMatter("---\nname: alpha\ndescription: 'Does A'\n---\nbody");
 * // { name: "alpha", description: "Does A" }
 * parseFrontMatter("no front matter"); // undefined
 * ```
 */
export function parseFrontMatter(text: string): FrontMatter | undefined {
  const lines = text.split(/\r?\n/);
  if (lines[0]?.trimEnd() !== "---") return undefined;
  const end = lines.findIndex((l, i) => i > 0 && l.trimEnd() === "---");
  if (end < 0) return undefined;
  const body = lines.slice(1, end);
  return body.some((l) => l.trim() !== "") ? mapping(body, false) : {};
}
