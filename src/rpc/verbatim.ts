/**
 * Bytes sent as base64 ({@linkcode Base64Part}), spliced into a serialized
 * message instead of passing through `JSON.stringify`, which scans and
 * copies every character: 100 to 250 ms for the 89 MB answer to a 64 MiB
 * `fs/readFile`, against nothing for the splice.
 *
 * @module
 */
import { Base64Part, type FramePart, type OutgoingFrame } from "./connection.ts";
import { BinaryFrame } from "./binary_frame.ts";

/** Makes placeholders unguessable by whoever chooses the other strings. */
const SALT = Math.random().toString(36).slice(2);
let counter = 0;

/**
 * `JSON.stringify(message)`, with every {@linkcode Base64Part} among the
 * top-level fields of `message.result` (a response) or `message.params` (a
 * request: a streamed upload's pieces) spliced in unscanned: then the
 * message comes in parts, the base64 parts among them left for the
 * transport to encode as it writes them. With `binaryFrames` (the
 * transport carries them), the first part marked `binaryFrame` makes the
 * message a {@linkcode BinaryFrame} with those bytes as its payload
 * instead; any others stay base64 in its JSON.
 *
 * @example
 * ```ts
 * import { Base64Part } from "./connection.ts";
 * import { stringifyMessage } from "./verbatim.ts";
 * const hi = new Base64Part(new TextEncoder().encode("hi"));
 * stringifyMessage({ id: 1, result: { dataBase64: hi } });
 * // ['{"id":1,"result":{"dataBase64":"', hi, '"}}']
 * ```
 */
export function stringifyMessage(
  message: { id?: unknown; method?: string; params?: unknown; result?: unknown },
  opts: { binaryFrames?: boolean } = {},
): OutgoingFrame {
  const key = "result" in message ? "result" : "params";
  const body = message[key];
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return JSON.stringify(message);
  }
  const entries = Object.entries(body);
  // Most answers carry none: they cost one look at their fields, no copy.
  if (!entries.some(([, value]) => value instanceof Base64Part)) return JSON.stringify(message);
  const payload = opts.binaryFrames
    ? entries.find(([, value]) => value instanceof Base64Part && value.binaryFrame)
    : undefined;
  if (payload) {
    const [field, part] = payload as [string, Base64Part];
    const rest: Record<string, unknown> = { ...body };
    delete rest[field];
    return new BinaryFrame(JSON.stringify({ ...message, [key]: rest }), field, part.bytes);
  }
  const shallow: Record<string, unknown> = {};
  const spliced: { field: string; part: Base64Part }[] = [];
  for (const [key, value] of entries) {
    if (value instanceof Base64Part) {
      const token = `\u0000verbatim:${SALT}:${++counter}`;
      // Searched for with its key: inside a JSON string every quote is
      // escaped, so `"key":"token"` occurs only where the field is.
      spliced.push({ field: `${JSON.stringify(key)}:${JSON.stringify(token)}`, part: value });
      shallow[key] = token;
    } else {
      shallow[key] = value;
    }
  }
  const text = JSON.stringify({ ...message, [key]: shallow });
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
