/**
 * The websocket listener's access rules: bearer tokens (loaded, generated,
 * compared in constant time), browser origins, and which addresses count as
 * loopback.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { isIPv4, isIPv6 } from "node:net";

/** A websocket listener setting that cannot work or would be unsafe. */
export class WebSocketConfigError extends Error {
  /**
   * Describe the bad setting.
   *
   * @param message what is wrong, naming the value
   */
  constructor(message: string) {
    super(message);
    this.name = "WebSocketConfigError";
  }
}

/** Bytes of randomness in a generated token (written as twice as many hex digits). */
export const GENERATED_TOKEN_BYTES = 32;

/** A fresh token: 32 crypto-random bytes as 64 lowercase hex digits. */
export function generateToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(GENERATED_TOKEN_BYTES));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// RFC 6750 allows more, but anything printable without spaces is safe in a header.
const TOKEN_RE = /^[\x21-\x7e]+$/;

/**
 * Check that `token` can be sent as `Authorization: Bearer <token>`.
 *
 * @throws {WebSocketConfigError} when it is empty or holds spaces or non-ASCII
 */
export function validateToken(token: string, source = "the token"): string {
  if (token.length === 0) throw new WebSocketConfigError(`${source} is empty`);
  if (!TOKEN_RE.test(token)) {
    throw new WebSocketConfigError(
      `${source} must be printable ASCII without spaces (it travels in an HTTP header)`,
    );
  }
  return token;
}

/** A token file's content and whether others can read it. */
export interface TokenFile {
  /** The token: the file's content with surrounding whitespace removed. */
  token: string;
  /** True when the file's mode lets its group or others read it. */
  readableByOthers: boolean;
}

/**
 * Read a token file (`--token-file`): the whole content, trimmed.
 *
 * @example
 * ```ts
 * import { readTokenFile } from "./websocket_auth.ts";
 * const { token } = await readTokenFile("/run/secrets/exec-server-token");
 * ```
 * @throws {WebSocketConfigError} when the file cannot be read or holds no usable token
 */
export async function readTokenFile(path: string): Promise<TokenFile> {
  let text: string;
  let mode: number;
  try {
    text = await readFile(path, "utf8");
    mode = (await stat(path)).mode;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new WebSocketConfigError(`cannot read token file ${JSON.stringify(path)}: ${why}`);
  }
  const token = validateToken(text.trim(), `token file ${JSON.stringify(path)}`);
  return { token, readableByOthers: (mode & 0o044) !== 0 };
}

/**
 * Checks `Authorization: Bearer <token>` headers against one token without
 * leaking, through timing, how much of a guess was right.
 */
export class BearerToken {
  #digest: Uint8Array;

  /**
   * Keep a digest of the expected token, not the token itself.
   *
   * @param token the expected token
   */
  constructor(token: string) {
    this.#digest = sha256(validateToken(token));
  }

  /** True when `authorization` is `Bearer <the token>` (scheme case-insensitive). */
  matches(authorization: string | null | undefined): boolean {
    const m = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    // Hashing first gives equal-length inputs, so the comparison's time
    // depends on neither the guess's length nor its content.
    return timingSafeEqual(sha256(m ? m[1] : ""), this.#digest);
  }
}

function sha256(text: string): Uint8Array {
  return createHash("sha256").update(text, "utf8").digest();
}

/**
 * Normalize an origin for comparison: scheme and host lowercased, default
 * ports dropped (`HTTP://Example.com:80` → `http://example.com`). `null`
 * (sandboxed pages, files) stays `null`.
 *
 * @throws {WebSocketConfigError} when `origin` is not a `scheme://host[:port]` origin
 */
export function normalizeOrigin(origin: string): string {
  const trimmed = origin.trim();
  if (trimmed === "null") return "null";
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new WebSocketConfigError(`not an origin: ${JSON.stringify(origin)}`);
  }
  if (url.origin === "null" || (url.pathname !== "/" && url.pathname !== "") || url.search) {
    throw new WebSocketConfigError(
      `not an origin (want scheme://host[:port]): ${JSON.stringify(origin)}`,
    );
  }
  return url.origin;
}

/** The set of browser origins allowed to connect. */
export class OriginPolicy {
  #allowed: Set<string>;

  /**
   * @param allowed origins (`--allow-origin`)
   * @throws {WebSocketConfigError} for a malformed origin
   */
  constructor(allowed: readonly string[]) {
    this.#allowed = new Set(allowed.map(normalizeOrigin));
  }

  /** True when a request with this `Origin` header (or none) may connect. */
  allows(origin: string | null | undefined): boolean {
    // Only browsers send Origin; other clients are judged by their token alone.
    if (origin === null || origin === undefined) return true;
    let normalized: string;
    try {
      normalized = normalizeOrigin(origin);
    } catch {
      return false;
    }
    return this.#allowed.has(normalized);
  }
}

/**
 * True when `hostname` names only this machine: `localhost`, 127.0.0.0/8,
 * `::1`, or an IPv4-mapped 127.x address. `0.0.0.0`, `::` and every other
 * name count as reachable from elsewhere.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  if (host === "localhost") return true;
  if (isIPv4(host)) return host.startsWith("127.");
  if (isIPv6(host)) {
    const canonical = new URL(`http://[${host.replace(/%.*$/, "")}]/`).hostname;
    return canonical === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:/.test(canonical);
  }
  return false;
}
