/**
 * How an untrusted value is quoted in an error message: as JSON, cut short,
 * so a huge or binary parameter cannot flood a log or a reply. Shared by
 * the parameter readers and the path rules so both quote alike.
 *
 * @module
 */

/** Longest quoted value before it is cut and ends in `...`. */
const MAX_SHOWN = 80;

/**
 * `value` as JSON for a message, at most 80 characters; `nothing` for
 * `undefined` (an absent field).
 *
 * @example
 * ```ts
 * import { show } from "./show.ts";
 * show("a b"); // "\"a b\""
 * show(undefined); // "nothing"
 * ```
 */
export function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 3)}...` : text;
}
