/**
 * The one rule for what names a file in exec-server.v0: an absolute path,
 * or a `file://` URI on this host that decodes to one. It is a pure
 * function returning the path or the reason it is refused, so the server's
 * parameter checks, the local filesystem and the client's remote
 * filesystem agree on every input while each throws its own error class
 * with its own wording.
 *
 * @module
 */
import { show } from "./show.ts";

/** Why a path or file URI was refused. */
export type PathProblem =
  /** Neither starting with `/` nor (when URIs are accepted) a file URI. */
  | "notAbsolute"
  /** A NUL byte, which no system call accepts. */
  | "containsNul"
  /** `file:x`: a URI without the `/` of an absolute path. */
  | "relativeUri"
  /** Unparsable, or with a bad percent-encoding. */
  | "invalidUri"
  /** `file://host/...` for a host other than `localhost`. */
  | "remoteHost"
  /** A `?` or `#`, which would drop part of the path silently. */
  | "queryOrFragment"
  /** `%2F`, which would name another path than its segments say. */
  | "encodedSlash";

/** What {@linkcode parsePath} found. */
export type ParsedPath =
  | {
    /** The value names a usable path. */
    ok: true;
    /** The absolute path, decoded when the value was a file URI. */
    path: string;
    /** Whether the value was read as a `file:` URI. */
    isUri: boolean;
  }
  | {
    /** The value was refused. */
    ok: false;
    /** The rule it broke. */
    problem: PathProblem;
    /** Whether the value was read as a `file:` URI. */
    isUri: boolean;
    /**
     * The protocol's wording of the problem, quoting the value, meant to
     * follow a field name: `must be an absolute path, got "a/b"`.
     */
    reason: string;
  };

/** Options of {@linkcode parsePath}. */
export interface ParsePathOptions {
  /**
   * Read a value starting with `file:` (any case) as a URI (default true);
   * when false it is just a relative path.
   */
  fileUris?: boolean;
}

/** Whether `value` is meant as a `file:` URI (the scheme in any case). */
export function isFileUri(value: string): boolean {
  return /^file:/i.test(value);
}

/**
 * Read `value` as an absolute path or a `file://` URI.
 *
 * @example
 * ```ts
 * import { parsePath } from "./paths.ts";
 * parsePath("file:///tmp/a%20b"); // { ok: true, path: "/tmp/a b", isUri: true }
 * parsePath("tmp/a").ok; // false
 * ```
 */
export function parsePath(value: string, options: ParsePathOptions = {}): ParsedPath {
  const isUri = (options.fileUris ?? true) && isFileUri(value);
  if (!isUri) return checkAbsolute(value, value, false);
  const decoded = decodeFileUri(value);
  if (typeof decoded !== "string") return { ok: false, isUri, ...decoded };
  return checkAbsolute(decoded, value, true);
}

/** A refusal without the fields {@linkcode parsePath} adds. */
type Refusal = { problem: PathProblem; reason: string };

function checkAbsolute(path: string, value: string, isUri: boolean): ParsedPath {
  if (!path.startsWith("/")) {
    return {
      ok: false,
      isUri,
      problem: "notAbsolute",
      reason: `must be an absolute path, got ${show(value)}`,
    };
  }
  if (path.includes("\0")) {
    return {
      ok: false,
      isUri,
      problem: "containsNul",
      reason: `must not contain NUL: ${show(value)}`,
    };
  }
  return { ok: true, path, isUri };
}

/** The percent-decoded path of a `file:` URI, or why it has none. */
function decodeFileUri(value: string): string | Refusal {
  // URL parsing would turn "file:x" into "/x": a URI must be absolute too.
  if (!/^file:\//i.test(value)) {
    return { problem: "relativeUri", reason: `must be an absolute file URI, got ${show(value)}` };
  }
  const invalid: Refusal = {
    problem: "invalidUri",
    reason: `is not a valid file URI: ${show(value)}`,
  };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return invalid;
  }
  if (url.host !== "" && url.host !== "localhost") {
    return { problem: "remoteHost", reason: `names a remote host: ${show(value)}` };
  }
  // A '?' or '#' would otherwise be dropped silently from the path.
  if (url.search !== "" || url.hash !== "" || /[?#]/.test(value)) {
    return {
      problem: "queryOrFragment",
      reason: `file URI has a query or fragment (percent-encode ? and #): ${show(value)}`,
    };
  }
  // An encoded '/' would name a different path than its segments say.
  if (/%2f/i.test(url.pathname)) {
    return { problem: "encodedSlash", reason: `file URI encodes a '/' (%2F): ${show(value)}` };
  }
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return invalid;
  }
}
