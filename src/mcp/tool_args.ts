/**
 * Reading a tool call's arguments: each reader checks one argument and
 * throws a {@linkcode ToolInputError} naming it and the bad value, which
 * the model sees as the tool's error and can correct.
 *
 * @module
 */
import { posix } from "node:path";

/** A tool call's argument that cannot be used; the message names it and its value. */
export class ToolInputError extends Error {
  /** @param message what is wrong */
  constructor(message: string) {
    super(message);
    this.name = "ToolInputError";
  }
}

/** A tool call's arguments. */
export type Args = Record<string, unknown>;

const show = (v: unknown): string => {
  const text = JSON.stringify(v);
  return text === undefined ? String(v) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** A required string. */
export function requiredString(args: Args, name: string): string {
  const v = args[name];
  if (typeof v !== "string") {
    throw new ToolInputError(`${name} must be a string, got ${show(v)}`);
  }
  return v;
}

/** An optional string. */
export function optionalString(args: Args, name: string): string | undefined {
  return args[name] === undefined || args[name] === null ? undefined : requiredString(args, name);
}

/** An optional boolean. */
export function optionalBoolean(args: Args, name: string): boolean | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") {
    throw new ToolInputError(`${name} must be true or false, got ${show(v)}`);
  }
  return v;
}

/**
 * An optional whole number from `min` to `max`; a numeric string is taken
 * too, since models often quote numbers.
 */
export function optionalInt(
  args: Args,
  name: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === "string" && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    throw new ToolInputError(`${name} must be a whole number ${range}, got ${show(v)}`);
  }
  return n;
}

/** A required whole number of at least `min`. */
export function requiredInt(args: Args, name: string, min: number): number {
  const n = optionalInt(args, name, min);
  if (n === undefined) throw new ToolInputError(`${name} is required`);
  return n;
}

/** An optional array of strings. */
export function optionalStrings(args: Args, name: string): string[] | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
    throw new ToolInputError(`${name} must be an array of strings, got ${show(v)}`);
  }
  return v;
}

/** An optional object of string values (an environment). */
export function optionalStringMap(args: Args, name: string): Record<string, string> | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) {
    throw new ToolInputError(`${name} must be an object of strings, got ${show(v)}`);
  }
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(v)) {
    if (typeof value !== "string") {
      throw new ToolInputError(`${name}.${k} must be a string, got ${show(value)}`);
    }
    out[k] = value;
  }
  return out;
}

/**
 * Paths as the tools take them: absolute, or relative to `root` when the
 * server has one. Never relative to the server's own working directory,
 * which the model cannot know.
 */
export class PathResolver {
  /** The directory relative paths resolve against, if any. */
  readonly root: string | undefined;

  /** @param root an absolute directory, or undefined for absolute paths only */
  constructor(root?: string) {
    if (root !== undefined && !root.startsWith("/")) {
      throw new ToolInputError(`the root must be an absolute path, got ${show(root)}`);
    }
    this.root = root === undefined ? undefined : posix.normalize(root);
  }

  /** The absolute, normalized path argument `name`. */
  resolve(args: Args, name: string): string {
    return this.resolvePath(requiredString(args, name), name);
  }

  /** `path` (the argument `name`) made absolute and normalized. */
  resolvePath(path: string, name: string): string {
    if (path === "") throw new ToolInputError(`${name} must not be empty`);
    if (path.includes("\0")) {
      throw new ToolInputError(`${name} must not hold NUL, got ${show(path)}`);
    }
    if (path.startsWith("/")) return posix.normalize(path);
    if (path === "~" || path.startsWith("~/")) {
      throw new ToolInputError(`${name} must be absolute: ~ is not expanded, got ${show(path)}`);
    }
    if (this.root === undefined) {
      throw new ToolInputError(
        `${name} must be an absolute path, got ${show(path)} (this server has no --root)`,
      );
    }
    return posix.join(this.root, path);
  }
}
