/**
 * `environmentConfig/read` of the Codex dialect: the parts of this host's
 * own Codex configuration a client asks for, layer by layer, so that the
 * CLI can use what the host declares (its `mcp_servers`, reached through
 * this server's `http/request`). The layers and their order are upstream's
 * (0.171, read off the real binary): the system file
 * `/etc/codex/config.toml`, the user's `$CODEX_HOME/config.toml`
 * (`~/.codex` by default), and the trusted project layers from the
 * project's root down to `cwd` (./project_layers.ts); requirements come
 * from `/etc/codex/requirements.toml`. Each
 * layer holds only the asked-for subtrees, re-serialized as TOML; a layer
 * where none is present is left out.
 *
 * @module
 */
import { readFile, realpath, stat } from "node:fs/promises";
import os from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * smol-toml, loaded by the first read: most sessions never ask, and every
 * stdio server's start (which an ssh client waits for) would pay for it.
 */
let toml: typeof import("smol-toml") | undefined;
const loadTomlLibrary = async () => toml ??= await import("smol-toml");
import { projectDirs, trustedDirs } from "./project_layers.ts";
import { errnoOf } from "../runtime/errno.ts";
import { internalError, invalidParams } from "../protocol/errors.ts";
import { show } from "../protocol/show.ts";
import type { ConfigLayer, ConfigLayers, EnvironmentConfig, TomlPath } from "../protocol/codex.ts";

/** Where the files are: the system directory, the user's Codex home. */
export interface ConfigPlaces {
  /** `/etc/codex` on a real host. */
  systemDir: string;
  /** `$CODEX_HOME`, or `~/.codex`. */
  codexHome: string;
  /**
   * `codexHome` came from `$CODEX_HOME`: it must then be a directory, and
   * is answered by its real path (as upstream does; `~/.codex` need not exist).
   */
  codexHomeFromEnv?: boolean;
}

/** This host's places, from the environment as upstream reads it. */
export function hostConfigPlaces(env: Record<string, string | undefined>): ConfigPlaces {
  const fromEnv = env.CODEX_HOME !== undefined && env.CODEX_HOME !== "";
  const home = fromEnv ? env.CODEX_HOME! : join(os.homedir(), ".codex");
  return { systemDir: "/etc/codex", codexHome: home, codexHomeFromEnv: fromEnv };
}

/**
 * Check a list of TOML paths (`configPaths`, `requirementsPaths`).
 *
 * @throws {RpcError} -32602 naming the field and the bad value
 */
export function checkTomlPaths(value: unknown, field: string): TomlPath[] {
  if (!Array.isArray(value)) {
    throw invalidParams(`${field} must be an array of key paths, got ${show(value)}`);
  }
  return value.map((path, i) => {
    if (!Array.isArray(path) || !path.every((k) => typeof k === "string")) {
      throw invalidParams(`${field}[${i}] must be an array of strings, got ${show(path)}`);
    }
    if (path.length === 0) {
      throw invalidParams(`${field}[${i}]: TOML paths must contain at least one key segment`);
    }
    return path as string[];
  });
}

type Table = Record<string, unknown>;

const isTable = (v: unknown): v is Table =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);

/**
 * The parts of `doc` the paths name, in a document of their own (keys in
 * `doc`'s order), or undefined when none is present. As upstream, a path
 * whose first key is present counts: it takes what it names, or the
 * tables on its way that are there (`[["mcp", "zzz"]]` gives an empty
 * `mcp`), or a value that is not a table where one was expected.
 *
 * @example
 * ```ts
 * import { selectTomlPaths } from "./environment_config.ts";
 * selectTomlPaths({ model: "o3", mcp: { a: { url: "u" }, b: {} } }, [["mcp", "a"]]);
 * // { mcp: { a: { url: "u" } } }
 * ```
 */
export function selectTomlPaths(doc: Table, paths: TomlPath[]): Table | undefined {
  const present = paths.filter((path) => Object.hasOwn(doc, path[0]));
  if (present.length === 0) return undefined;
  const copy = (node: Table, prefixes: TomlPath[], depth: number): Table => {
    const out: Table = {};
    for (const [key, value] of Object.entries(node)) {
      const below = prefixes.filter((p) => p[depth] === key);
      if (below.length === 0) continue;
      // A path that ends here takes the whole value; else only what is asked below.
      out[key] = below.some((p) => p.length === depth + 1) || !isTable(value)
        ? value
        : copy(value, below, depth + 1);
    }
    return out;
  };
  return copy(doc, present, 0);
}

/** A file parsed, or undefined when it does not exist. */
async function loadToml(path: string): Promise<Table | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if (errnoOf(err) === "ENOENT" || errnoOf(err) === "ENOTDIR") return undefined;
    throw internalError(`failed to load executor-local config: ${path}: ${String(err)}`, {
      errno: errnoOf(err),
    });
  }
  try {
    return toml!.parse(text) as Table;
  } catch (err) {
    const where = err instanceof toml!.TomlError ? `:${err.line}:${err.column}` : "";
    const reason = err instanceof Error ? err.message.split("\n")[0] : String(err);
    throw internalError(`failed to load executor-local config: ${path}${where}: ${reason}`);
  }
}

interface Candidate {
  source: string;
  dir: string;
  doc: Table | undefined;
}

/** The layers of `candidates` that hold something of `paths`. */
function layersOf(candidates: Candidate[], paths: TomlPath[], beforeCloud: number): ConfigLayers {
  const layers: ConfigLayer[] = [];
  let cloudInsertionIndex = 0;
  candidates.forEach((c, i) => {
    const part = c.doc && paths.length > 0 ? selectTomlPaths(c.doc, paths) : undefined;
    if (!part) return;
    layers.push({
      source: c.source,
      baseDir: pathToFileURL(c.dir).href,
      toml: toml!.stringify(part),
    });
    if (i < beforeCloud) cloudInsertionIndex++;
  });
  return { layers, cloudInsertionIndex };
}

/** The Codex home to read: `$CODEX_HOME` must be a directory, answered by its real path. */
async function codexHomeOf(places: ConfigPlaces): Promise<string> {
  if (!places.codexHomeFromEnv) return places.codexHome;
  const asked = places.codexHome;
  const problem = `failed to find Codex home: CODEX_HOME points to ${JSON.stringify(asked)}`;
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(asked)).isDirectory();
  } catch (err) {
    const why = errnoOf(err) === "ENOENT" ? "but that path does not exist" : String(err);
    throw internalError(`${problem}, ${why}`);
  }
  if (!isDirectory) throw internalError(`${problem}, but that path is not a directory`);
  return await realpath(asked);
}

/** The project layers `user` trusts, root first (./project_layers.ts). */
async function projectCandidates(user: Table | undefined, cwd: string): Promise<Candidate[]> {
  const { root, dirs } = await projectDirs(cwd);
  const candidates: Candidate[] = [];
  for (const dir of await trustedDirs(user, root, dirs)) {
    const file = join(dir, ".codex", "config.toml");
    const doc = await loadToml(file);
    if (doc) candidates.push({ source: `project (${file})`, dir: join(dir, ".codex"), doc });
  }
  return candidates;
}

/**
 * Read the configuration at `places` for a client working in `cwd`.
 *
 * @throws {RpcError} -32602 when both path lists are empty; -32603 when a
 * file cannot be read or parsed (naming it, with line and column)
 */
export async function readEnvironmentConfig(
  places: ConfigPlaces,
  cwd: string,
  configPaths: TomlPath[],
  requirementsPaths: TomlPath[],
): Promise<EnvironmentConfig> {
  if (configPaths.length === 0 && requirementsPaths.length === 0) {
    throw invalidParams("at least one config or requirements path is required");
  }
  await loadTomlLibrary();
  const codexHome = await codexHomeOf(places);
  const systemFile = join(places.systemDir, "config.toml");
  const userFile = join(codexHome, "config.toml");
  const requirementsFile = join(places.systemDir, "requirements.toml");
  const [system, user, requirements] = await Promise.all([
    configPaths.length > 0 ? loadToml(systemFile) : undefined,
    loadToml(userFile),
    requirementsPaths.length > 0 ? loadToml(requirementsFile) : undefined,
  ]);
  const projects = configPaths.length > 0 ? await projectCandidates(user, resolve(cwd)) : [];
  return {
    userHomeDir: pathToFileURL(os.homedir()).href,
    codexHomeDir: pathToFileURL(codexHome).href,
    hostname: os.hostname(),
    config: layersOf(
      [
        { source: `system (${systemFile})`, dir: places.systemDir, doc: system },
        { source: `user (${userFile})`, dir: codexHome, doc: user },
        ...projects,
      ],
      configPaths,
      1,
    ),
    requirements: layersOf(
      [{ source: requirementsFile, dir: places.systemDir, doc: requirements }],
      requirementsPaths,
      1,
    ),
  };
}
