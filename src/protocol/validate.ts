/**
 * Parameter readers that turn untrusted `params` into typed values or throw
 * an `InvalidParams` error naming the field and the bad value.
 *
 * @module
 */
import { invalidParams } from "./errors.ts";

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

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

/** A required string field. */
export function requireString(
  obj: Record<string, unknown>,
  field: string,
): string {
  const value = obj[field];
  if (typeof value !== "string") {
    throw invalidParams(`${field} must be a string, got ${show(value)}`);
  }
  return value;
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
export function requireBoolean(
  obj: Record<string, unknown>,
  field: string,
): boolean {
  const value = obj[field];
  if (typeof value !== "boolean") {
    throw invalidParams(`${field} must be a boolean, got ${show(value)}`);
  }
  return value;
}

/** An optional boolean field with a default (null reads as absent). */
export function optionalBoolean(
  obj: Record<string, unknown>,
  field: string,
  fallback: boolean,
): boolean {
  const value = obj[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") {
    throw invalidParams(`${field} must be a boolean, got ${show(value)}`);
  }
  return value;
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

/** Check that `value` is an absolute path or a `file://` URI; return the path. */
export function absolutePath(value: string, field: string): string {
  let path = value;
  if (/^file:/i.test(value)) {
    // URL parsing would turn "file:x" into "/x": a URI must be absolute too.
    if (!/^file:\//i.test(value)) {
      throw invalidParams(`${field} must be an absolute file URI, got ${show(value)}`);
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw invalidParams(`${field} is not a valid file URI: ${show(value)}`);
    }
    if (url.host !== "" && url.host !== "localhost") {
      throw invalidParams(`${field} names a remote host: ${show(value)}`);
    }
    // A '?' or '#' would otherwise be dropped silently from the path.
    if (url.search !== "" || url.hash !== "" || /[?#]/.test(value)) {
      throw invalidParams(
        `${field} file URI has a query or fragment (percent-encode ? and #): ${show(value)}`,
      );
    }
    // An encoded '/' would name a different path than its segments say.
    if (/%2f/i.test(url.pathname)) {
      throw invalidParams(`${field} file URI encodes a '/' (%2F): ${show(value)}`);
    }
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      throw invalidParams(`${field} is not a valid file URI: ${show(value)}`);
    }
  }
  if (!path.startsWith("/")) {
    throw invalidParams(`${field} must be an absolute path, got ${show(value)}`);
  }
  if (path.includes("\0")) {
    throw invalidParams(`${field} must not contain NUL: ${show(value)}`);
  }
  return path;
}
