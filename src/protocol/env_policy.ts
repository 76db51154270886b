/**
 * `envPolicy`: how the Codex dialect builds a child's environment on the
 * server, before the request's `env` is laid over it.
 *
 * 1. Start from `inherit`: `all` is the server's environment, `none` is
 *    empty, `core` keeps only HOME, LOGNAME, PATH, SHELL, USER, USERNAME,
 *    TMPDIR, TEMP and TMP.
 * 2. Unless `ignoreDefaultExcludes`, drop names matching `*KEY*`,
 *    `*SECRET*` or `*TOKEN*`.
 * 3. Drop names matching an `exclude` pattern. 4. Add `set`.
 * 5. When `includeOnly` is not empty, keep only names matching it.
 *
 * Patterns are globs (`*` any run, `?` one character), matched without
 * regard to case, as names like `Path` and `PATH` mean the same to people.
 *
 * @module
 */
import { invalidParams } from "./errors.ts";
import type { EnvPolicy } from "./codex.ts";

const CORE_NAMES = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "USER",
  "USERNAME",
  "TMPDIR",
  "TEMP",
  "TMP",
];
const DEFAULT_EXCLUDES = ["*KEY*", "*SECRET*", "*TOKEN*"];

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*").replaceAll(
    "?",
    ".",
  );
  return new RegExp(`^${body}$`, "i");
}

function matcher(globs: string[]): (name: string) => boolean {
  const res = globs.map(globToRegExp);
  return (name) => res.some((re) => re.test(name));
}

/**
 * The environment `policy` builds from `base` (the server's own), with
 * `env` laid over it.
 *
 * @example
 * ```ts
 * import { buildEnvironment } from "./env_policy.ts";
 * buildEnvironment(
 *   { PATH: "/bin", HOME: "/root", API_KEY: "x", LANG: "C" },
 *   { inherit: "all", ignoreDefaultExcludes: false, exclude: ["LANG"], set: {}, includeOnly: [] },
 *   { TERM: "dumb" },
 * ); // { PATH: "/bin", HOME: "/root", TERM: "dumb" }
 * ```
 */
export function buildEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  policy: EnvPolicy,
  env: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (policy.inherit !== "none") {
    const core = policy.inherit === "core" ? new Set(CORE_NAMES) : undefined;
    for (const [name, value] of Object.entries(base)) {
      if (value !== undefined && (!core || core.has(name))) out[name] = value;
    }
  }
  const drop = matcher([
    ...(policy.ignoreDefaultExcludes ? [] : DEFAULT_EXCLUDES),
    ...policy.exclude,
  ]);
  for (const name of Object.keys(out)) if (drop(name)) delete out[name];
  Object.assign(out, policy.set);
  if (policy.includeOnly.length > 0) {
    const keep = matcher(policy.includeOnly);
    for (const name of Object.keys(out)) if (!keep(name)) delete out[name];
  }
  return Object.assign(out, env);
}

function stringList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw invalidParams(`envPolicy.${field} must be an array of strings`);
  }
  return value as string[];
}

/**
 * Check an `envPolicy` from the wire; absent or null gives undefined.
 *
 * @throws {RpcError} -32602 naming the bad field
 */
export function checkEnvPolicy(value: unknown): EnvPolicy | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw invalidParams("envPolicy must be an object or null");
  }
  const p = value as Record<string, unknown>;
  const inherit = p.inherit ?? "all";
  if (inherit !== "all" && inherit !== "core" && inherit !== "none") {
    throw invalidParams(
      `envPolicy.inherit must be "all", "core" or "none", got ${JSON.stringify(inherit)}`,
    );
  }
  const set = p.set ?? {};
  if (
    typeof set !== "object" || set === null || Array.isArray(set) ||
    Object.values(set).some((v) => typeof v !== "string")
  ) {
    throw invalidParams("envPolicy.set must be an object of strings");
  }
  return {
    inherit,
    ignoreDefaultExcludes: p.ignoreDefaultExcludes === true,
    exclude: stringList(p.exclude, "exclude"),
    set: set as Record<string, string>,
    includeOnly: stringList(p.includeOnly, "includeOnly"),
  };
}
