/**
 * Parameter readers that turn untrusted `params` into typed values or throw
 * an `InvalidParams` error naming the field and the bad value.
 *
 * @module
 */
import { Base64Part, decodeBase64, InvalidBase64Error } from "./base64.ts";
import { invalidParams } from "./errors.ts";
import { parsePath } from "./paths.ts";
import { show } from "./show.ts";

/** Require `params` to be an object; absent params read as `{}`. */
export function paramsObject(
  params: unknown,
  method: string,
): Record<string, unknown> {
  if (params === undefined || params === null) return {};
  if (typeof params !== "object" || Array.isArray(params)) {
    throw invalidParams(`${method}: params must be an object, got ${show(params)}`);
  }
  return params as Record<string, unknown>;
}

/** The types {@linkcode typed} checks, by their `typeof` name. */
interface Typed {
  string: string;
  boolean: boolean;
}

/** `value` if its `typeof` is `type`, else an error naming the field and value. */
function typed<K extends keyof Typed>(value: unknown, field: string, type: K): Typed[K] {
  const actual: string = typeof value;
  if (actual !== type) {
    throw invalidParams(`${field} must be a ${type}, got ${show(value)}`);
  }
  return value as Typed[K];
}

/** A required string field. */
export function requireString(obj: Record<string, unknown>, field: string): string {
  return typed(obj[field], field, "string");
}

/** A required non-empty string field. */
export function requireNonEmptyString(
  obj: Record<string, unknown>,
  field: string,
): string {
  const value = requireString(obj, field);
  if (value.length === 0) throw invalidParams(`${field} must not be empty`);
  return value;
}

/** A required boolean field. */
export function requireBoolean(obj: Record<string, unknown>, field: string): boolean {
  return typed(obj[field], field, "boolean");
}

/** An optional boolean field with a default (null reads as absent). */
export function optionalBoolean(
  obj: Record<string, unknown>,
  field: string,
  fallback: boolean,
): boolean {
  const value = obj[field];
  if (value === undefined || value === null) return fallback;
  return typed(value, field, "boolean");
}

/**
 * An optional non-negative integer field (null reads as absent).
 *
 * @param max the largest accepted value
 */
export function optionalNonNegativeInteger(
  obj: Record<string, unknown>,
  field: string,
  max: number = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const value = obj[field];
  if (value === undefined || value === null) return undefined;
  if (
    typeof value !== "number" || !Number.isInteger(value) || value < 0 ||
    value > max
  ) {
    throw invalidParams(
      `${field} must be an integer from 0 to ${max}, got ${show(value)}`,
    );
  }
  return value;
}

/** A required integer field within `[min, max]`. */
export function requireIntegerInRange(
  obj: Record<string, unknown>,
  field: string,
  min: number,
  max: number,
): number {
  const value = obj[field];
  if (
    typeof value !== "number" || !Number.isInteger(value) || value < min ||
    value > max
  ) {
    throw invalidParams(
      `${field} must be an integer from ${min} to ${max}, got ${show(value)}`,
    );
  }
  return value;
}

/** A required non-empty array of strings. */
export function requireStringArray(
  obj: Record<string, unknown>,
  field: string,
): string[] {
  const value = obj[field];
  if (!Array.isArray(value)) {
    throw invalidParams(`${field} must be an array of strings, got ${show(value)}`);
  }
  if (value.length === 0) throw invalidParams(`${field} must not be empty`);
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== "string") {
      throw invalidParams(`${field}[${i}] must be a string, got ${show(value[i])}`);
    }
  }
  return value as string[];
}

/** A required object whose values are all strings. */
export function requireStringRecord(
  obj: Record<string, unknown>,
  field: string,
): Record<string, string> {
  const value = obj[field];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidParams(`${field} must be an object of strings, got ${show(value)}`);
  }
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== "string") {
      throw invalidParams(`${field}.${key} must be a string, got ${show(v)}`);
    }
    if (key.includes("=") || key.includes("\0") || v.includes("\0")) {
      throw invalidParams(`${field} has an invalid entry ${show(key)}`);
    }
  }
  return value as Record<string, string>;
}

/**
 * A required field of standard padded base64, decoded.
 *
 * @example
 * ```ts
 * import { requireBase64 } from "./validate.ts";
 * requireBase64({ data: "aGk=" }, "data"); // Uint8Array [104, 105]
 * ```
 */
export function requireBase64(
  obj: Record<string, unknown>,
  field: string,
): Uint8Array {
  // A binary frame's payload, put in its place by the RPC layer.
  const value = obj[field];
  if (value instanceof Base64Part) return value.bytes;
  const text = requireString(obj, field);
  try {
    return decodeBase64(text);
  } catch (err) {
    if (err instanceof InvalidBase64Error) throw invalidParams(`${field}: ${err.message}`);
    throw err;
  }
}

/**
 * A required absolute path; `file://` URIs are accepted and converted.
 *
 * @example
 * ```ts
 * import { requireAbsolutePath } from "./validate.ts";
 * requireAbsolutePath({ path: "file:///tmp/a%20b" }, "path"); // "/tmp/a b"
 * ```
 */
export function requireAbsolutePath(
  obj: Record<string, unknown>,
  field: string,
): string {
  const value = requireString(obj, field);
  return absolutePath(value, field);
}

/**
 * Check that `value` is an absolute path or a `file://` URI (by the rule of
 * {@linkcode parsePath}); return the path.
 */
export function absolutePath(value: string, field: string): string {
  const parsed = parsePath(value);
  if (!parsed.ok) throw invalidParams(`${field} ${parsed.reason}`);
  return parsed.path;
}
