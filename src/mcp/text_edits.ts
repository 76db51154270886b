/**
 * `edit_file`'s replacements: each `oldText` must occur exactly once, so
 * that an edit never lands somewhere the model did not mean. Files with
 * CRLF line ends are matched with the model's LF text too, and keep their
 * CRLFs.
 *
 * @module
 */
import { type Args, ToolInputError } from "./tool_args.ts";

/** One replacement. */
export interface TextEdit {
  /** The exact text to find. */
  oldText: string;
  /** What replaces it. */
  newText: string;
}

/** The `edits` argument, checked. */
export function readEdits(args: Args): TextEdit[] {
  const edits = args.edits;
  if (!Array.isArray(edits) || edits.length === 0) {
    throw new ToolInputError("edits must be a non-empty array of {oldText, newText}");
  }
  return edits.map((e, i) => {
    if (typeof e !== "object" || e === null) {
      throw new ToolInputError(`edits[${i}] must be an object {oldText, newText}`);
    }
    const { oldText, newText } = e as Record<string, unknown>;
    if (typeof oldText !== "string" || oldText === "") {
      throw new ToolInputError(`edits[${i}].oldText must be a non-empty string`);
    }
    if (typeof newText !== "string") {
      throw new ToolInputError(`edits[${i}].newText must be a string`);
    }
    return { oldText, newText };
  });
}

/** Occurrences of `needle` in `text`, counted without overlaps. */
function count(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    n++;
  }
  return n;
}

/**
 * `text` with every edit applied in order (each sees the previous ones'
 * result).
 *
 * @example
 * ```ts
 * import { applyEdits } from "./text_edits.ts";
 * applyEdits("a = 1\nb = 2\n", [{ oldText: "b = 2", newText: "b = 3" }], "/x.py");
 * // "a = 1\nb = 3\n"
 * ```
 * @throws {ToolInputError} when an `oldText` is missing or occurs more than once
 */
export function applyEdits(text: string, edits: TextEdit[], path: string): string {
  const crlf = text.includes("\r\n");
  let out = text;
  edits.forEach((edit, i) => {
    let { oldText, newText } = edit;
    let n = count(out, oldText);
    if (n === 0 && crlf && !oldText.includes("\r\n") && oldText.includes("\n")) {
      oldText = oldText.replaceAll("\n", "\r\n");
      newText = newText.replace(/\r?\n/g, "\r\n");
      n = count(out, oldText);
    }
    const which = edits.length > 1 ? `edit ${i + 1}: ` : "";
    if (n === 0) {
      throw new ToolInputError(
        `${which}oldText not found in ${path} (it must match exactly, whitespace included)`,
      );
    }
    if (n > 1) {
      throw new ToolInputError(
        `${which}oldText occurs ${n} times in ${path}; include more of the text around it ` +
          `so that it occurs once`,
      );
    }
    const at = out.indexOf(oldText);
    out = out.slice(0, at) + newText + out.slice(at + oldText.length);
  });
  return out;
}
