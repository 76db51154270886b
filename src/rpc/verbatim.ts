/**
 * Big strings that need no JSON escaping (base64), spliced into a
 * serialized message instead of passing through `JSON.stringify`, which
 * scans and copies every character: 100 to 250 ms for the 89 MB answer to
 * a 64 MiB `fs/readFile`, against nothing for the splice.
 *
 * @module
 */
import { Base64Part, type FramePart, type OutgoingFrame } from "./connection.ts";

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

/** A result field spliced in: {@linkcode VerbatimString}, or bytes sent as base64. */
function isSpliced(value: unknown): value is VerbatimString | Base64Part {
  return value instanceof VerbatimString || value instanceof Base64Part;
}

/**
 * `JSON.stringify(message)`, with every {@linkcode VerbatimString} and
 * {@linkcode Base64Part} among the top-level fields of `message.result`
 * spliced in unscanned: then the message comes in parts, the big strings
 * among them as they are (neither scanned nor copied), and the base64 parts
 * left for the transport to encode as it writes them.
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
  if (!entries.some(([, value]) => isSpliced(value))) return JSON.stringify(message);
  const shallow: Record<string, unknown> = {};
  const spliced: { field: string; part: FramePart }[] = [];
  for (const [key, value] of entries) {
    if (isSpliced(value)) {
      const token = `\u0000verbatim:${SALT}:${++counter}`;
      // Searched for with its key: inside a JSON string every quote is
      // escaped, so `"key":"token"` occurs only where the field is.
      const part = value instanceof VerbatimString ? value.text : value;
      spliced.push({ field: `${JSON.stringify(key)}:${JSON.stringify(token)}`, part });
      shallow[key] = token;
    } else {
      shallow[key] = value;
    }
  }
  const text = JSON.stringify({ ...message, result: shallow });
  // JSON.stringify keeps the order of the fields, so each is found after the last.
  const parts: FramePart[] = [];
  let from = 0;
  for (const { field, part } of spliced) {
    const at = text.indexOf(field, from);
    parts.push(text.slice(from, at + field.indexOf(":") + 1) + '"', part, '"');
    from = at + field.length;
  }
  parts.push(text.slice(from));
  return parts;
}
