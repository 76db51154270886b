/**
 * Big strings that need no JSON escaping (base64), spliced into a
 * serialized message instead of passing through `JSON.stringify`, which
 * scans and copies every character: 100 to 250 ms for the 89 MB answer to
 * a 64 MiB `fs/readFile`, against nothing for the splice.
 *
 * @module
 */
import type { OutgoingFrame } from "./connection.ts";

/**
 * A string serialized as is between quotes. Only for text with no
 * character that JSON escapes (such as base64); nothing checks.
 */
export class VerbatimString {
  /** @param text the string; must need no JSON escaping */
  constructor(readonly text: string) {}

  /** Elsewhere (logs, other serializers) it is the plain string. */
  toJSON(): string {
    return this.text;
  }
}

/** Makes placeholders unguessable by whoever chooses the other strings. */
const SALT = Math.random().toString(36).slice(2);
let counter = 0;

/**
 * `JSON.stringify(message)`, with every {@linkcode VerbatimString} among
 * the top-level fields of `message.result` spliced in unscanned: then the
 * message comes in parts, the big strings among them as they are (neither
 * scanned nor copied).
 *
 * @example
 * ```ts
 * import { stringifyMessage, VerbatimString } from "./verbatim.ts";
 * stringifyMessage({ id: 1, result: { dataBase64: new VerbatimString("aGk=") } });
 * // ['{"id":1,"result":{"dataBase64":"', "aGk=", '"}}']
 * ```
 */
export function stringifyMessage(message: { id?: unknown; result?: unknown }): OutgoingFrame {
  const result = message.result;
  if (result === null || typeof result !== "object" || Array.isArray(result)) {
    return JSON.stringify(message);
  }
  const entries = Object.entries(result);
  // Most answers carry none: they cost one look at their fields, no copy.
  if (!entries.some(([, value]) => value instanceof VerbatimString)) return JSON.stringify(message);
  const shallow: Record<string, unknown> = {};
  const spliced: { field: string; text: string }[] = [];
  for (const [key, value] of entries) {
    if (value instanceof VerbatimString) {
      const token = `\u0000verbatim:${SALT}:${++counter}`;
      // Searched for with its key: inside a JSON string every quote is
      // escaped, so `"key":"token"` occurs only where the field is.
      spliced.push({ field: `${JSON.stringify(key)}:${JSON.stringify(token)}`, text: value.text });
      shallow[key] = token;
    } else {
      shallow[key] = value;
    }
  }
  const text = JSON.stringify({ ...message, result: shallow });
  // JSON.stringify keeps the order of the fields, so each is found after the last.
  const parts: string[] = [];
  let from = 0;
  for (const { field, text: value } of spliced) {
    const at = text.indexOf(field, from);
    parts.push(text.slice(from, at + field.indexOf(":") + 1) + '"', value, '"');
    from = at + field.length;
  }
  parts.push(text.slice(from));
  return parts;
}
