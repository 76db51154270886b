/**
 * Capability discovery on this host, as the Codex CLI 0.171 expects it
 * (see ../protocol/codex_discovery.ts): the plugins installed in
 * `$CODEX_HOME/plugins/cache/<marketplace>/<plugin>/<version>/`, the skills
 * in `$CODEX_HOME/skills` and `~/.agents/skills` (hidden directories
 * included, directory symlinks followed), and the raw skill and plugin
 * files below roots a client names. What a sandbox does not let the
 * client read is left out, as if it were not there.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as fsp from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type DiscoveredPlugin,
  type DiscoveredRoot,
  type DiscoveredSkill,
  type DiscoverV2Result,
  DISCOVERY_WARNING,
  type FileContents,
  PLUGIN_MANIFESTS,
  type PluginFiles,
  type RootSkill,
} from "../protocol/codex_discovery.ts";
import { errnoOf } from "../runtime/errno.ts";
import { parseFrontMatter } from "../util/front_matter.ts";
import { type ReadGate, walkPlan, walkTree } from "../fs/walk.ts";
import { osError } from "../fs/errno.ts";
import { FileSystemError } from "../fs/types.ts";

/** The walk that finds skill files: the CLI's own bounds for its skill walk. */
const SKILL_WALK = { maxDepth: 6, maxDirectories: 2000, maxEntries: 20000 };

const uri = (path: string): string => pathToFileURL(path).href;

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Whether `gate` (when there is one) lets `path` be read. */
async function readable(path: string, gate: ReadGate | undefined): Promise<boolean> {
  if (!gate) return true;
  try {
    return gate(await fsp.realpath(path));
  } catch {
    return false;
  }
}

/** A file's text, or undefined when it is missing, not a file or not readable. */
async function text(path: string, gate: ReadGate | undefined): Promise<FileContents | undefined> {
  if (!await readable(path, gate)) return undefined;
  try {
    const st = await fsp.stat(path);
    if (!st.isFile()) return undefined;
    return { path: uri(path), contents: await fsp.readFile(path, "utf8") };
  } catch {
    return undefined;
  }
}

/** The plugin files of `dir`, when it holds one of the manifests. */
export async function pluginFiles(
  dir: string,
  gate?: ReadGate,
): Promise<PluginFiles | undefined> {
  for (const name of PLUGIN_MANIFESTS) {
    const manifest = await text(join(dir, name), gate);
    if (!manifest) continue;
    return {
      manifest,
      mcpConfig: (await text(join(dir, ".mcp.json"), gate)) ?? null,
      appsConfig: (await text(join(dir, ".app.json"), gate)) ?? null,
    };
  }
  return undefined;
}

/** Every file the skill walk finds below `root`, in walk order. */
async function walkedFiles(root: string, gate: ReadGate | undefined): Promise<string[]> {
  const plan = walkPlan("walk", root, { ...SKILL_WALK, followDirectorySymlinks: true });
  const { entries } = await walkTree(root, plan, gate);
  return entries.filter((e) => e.kind === "file").map((e) => e.path);
}

/** The `SKILL.md` files of `files`, sorted by path. */
const skillsOf = (files: string[]): string[] =>
  files.filter((f) => basename(f) === "SKILL.md").sort(byBytes);

/** Every `SKILL.md` below `root`, sorted by path. */
async function skillFiles(root: string, gate: ReadGate | undefined): Promise<string[]> {
  return skillsOf(await walkedFiles(root, gate));
}

/** Runs of white space as one space, none at the ends (as upstream reads these fields). */
const collapsed = (text: string): string => text.split(/\s+/).filter((w) => w !== "").join(" ");

/** A skill file read and its front matter parsed, or undefined when it is not a usable skill. */
async function parsedSkill(
  file: string,
  prefix: string | undefined,
  gate: ReadGate | undefined,
): Promise<DiscoveredSkill | undefined> {
  const read = await text(file, gate);
  const front = read && parseFrontMatter(read.contents);
  const description = typeof front?.description === "string" ? collapsed(front.description) : "";
  if (!front || description === "") return undefined;
  const name = typeof front.name === "string" ? collapsed(front.name) : "";
  const named = name !== "" ? name : basename(dirname(file));
  const meta = front.metadata;
  const shortText = meta !== null && typeof meta === "object" && !Array.isArray(meta)
    ? meta["short-description"]
    : undefined;
  const short = shortText === undefined ? undefined : collapsed(shortText);
  return {
    name: prefix === undefined ? named : `${prefix}:${named}`,
    description,
    shortDescription: short ?? null,
    path: uri(file),
    dependencies: null,
    policy: null,
  };
}

/** The usable skills below `root`; `failed` is set when one could not be loaded. */
async function skillsBelow(
  root: string,
  prefix: string | undefined,
  gate: ReadGate | undefined,
): Promise<{ skills: DiscoveredSkill[]; failed: boolean }> {
  let files: string[];
  try {
    files = await skillFiles(root, gate);
  } catch (err) {
    // A root that does not exist holds nothing; one that cannot be read is a failure.
    const errno = err instanceof FileSystemError ? err.errno : errnoOf(err);
    return { skills: [], failed: errno !== "ENOENT" && errno !== "ENOTDIR" };
  }
  const parsed = await Promise.all(files.map((f) => parsedSkill(f, prefix, gate)));
  return {
    skills: parsed.filter((s): s is DiscoveredSkill => s !== undefined),
    failed: parsed.some((s) => s === undefined),
  };
}

/** Directory names below `dir`, sorted; none when it cannot be listed. */
async function subdirectories(dir: string): Promise<string[]> {
  try {
    const dirents = await fsp.readdir(dir, { withFileTypes: true });
    return dirents.filter((d) => d.isDirectory()).map((d) => d.name).sort(byBytes);
  } catch {
    return [];
  }
}

/** One installed plugin, or undefined (and a failure) when its manifest is unusable. */
async function installedPlugin(
  root: string,
  id: string,
  gate: ReadGate | undefined,
): Promise<{ plugin?: DiscoveredPlugin; failed: boolean }> {
  const files = await pluginFiles(root, gate);
  if (!files) return { failed: false };
  let manifest: unknown;
  try {
    manifest = JSON.parse(files.manifest.contents);
  } catch {
    return { failed: true };
  }
  if (typeof manifest !== "object" || manifest === null || Array.isArray(manifest)) {
    return { failed: true };
  }
  const version = basename(root);
  const name = (manifest as { name?: unknown }).name;
  const displayName = typeof name === "string" && name !== "" ? name : version;
  const declared = (manifest as { skills?: unknown }).skills;
  const skillsDir = join(root, typeof declared === "string" ? declared : "skills");
  const { skills, failed } = await skillsBelow(skillsDir, displayName, gate);
  return {
    plugin: {
      id,
      displayName,
      remotePluginId: null,
      version,
      root: uri(root),
      files,
      skills,
    },
    failed,
  };
}

/**
 * `capabilities/discoverV2`: the host's plugins and global skills.
 *
 * @param codexHome `$CODEX_HOME` of the server
 * @param home the home directory of the user the server runs as
 */
export async function discoverV2(
  codexHome: string,
  home: string,
  gate?: ReadGate,
): Promise<DiscoverV2Result> {
  const warnings: string[] = [];
  const plugins: DiscoveredPlugin[] = [];
  const cache = join(codexHome, "plugins", "cache");
  let pluginFailed = false;
  for (const market of await subdirectories(cache)) {
    for (const name of await subdirectories(join(cache, market))) {
      const versions = await subdirectories(join(cache, market, name));
      // The newest version directory is the installed one.
      const version = versions.sort((a, b) => a.localeCompare(b, "en", { numeric: true })).at(-1);
      if (version === undefined) continue;
      const found = await installedPlugin(
        join(cache, market, name, version),
        `${name}@${market}`,
        gate,
      );
      if (found.plugin) plugins.push(found.plugin);
      pluginFailed ||= found.failed;
    }
  }
  if (pluginFailed) warnings.push(DISCOVERY_WARNING);
  plugins.sort((a, b) => byBytes(a.id, b.id));
  const skills: DiscoveredSkill[] = [];
  for (
    const [id, root] of [
      ["codex-home-skills", join(codexHome, "skills")],
      ["user-agent-skills", join(home, ".agents", "skills")],
    ]
  ) {
    const found = await skillsBelow(root, undefined, gate);
    for (const s of found.skills) skills.push({ ...s, discoveryRoot: { id, path: uri(root) } });
    if (found.failed) warnings.push(DISCOVERY_WARNING);
  }
  return { plugins, skills, warnings };
}

/**
 * The plugin directories whose manifest is among `files`, sorted by the
 * manifest's path.
 */
function pluginDirsOf(files: string[]): string[] {
  const dirs = new Map<string, string>();
  for (const file of files) {
    for (const manifest of PLUGIN_MANIFESTS) {
      if (!file.endsWith(`/${manifest}`)) continue;
      const dir = file.slice(0, -manifest.length - 1);
      if (!dirs.has(dir)) dirs.set(dir, file);
    }
  }
  return [...dirs].sort(([, a], [, b]) => byBytes(a, b)).map(([dir]) => dir);
}

/**
 * `capabilityRoots/discoverV1` for one root (an absolute path; `asked` is
 * the URI as the client gave it). Never throws: a root that cannot be
 * inspected is answered with its `error`.
 */
export async function discoverRoot(
  id: string,
  root: string,
  asked: string,
  gate?: ReadGate,
): Promise<DiscoveredRoot> {
  const answer: DiscoveredRoot = {
    id,
    path: asked,
    plugin: null,
    skills: [],
    namespaceManifests: [],
    warnings: [],
    error: null,
  };
  try {
    const st = await fsp.stat(root);
    if (!st.isDirectory()) {
      return { ...answer, error: `capability root ${asked} is not a directory` };
    }
    if (!await readable(root, gate)) throw Object.assign(new Error("denied"), { code: "EACCES" });
  } catch (err) {
    const reason = osError("inspect", root, err).message;
    return { ...answer, error: `failed to inspect capability root ${asked}: ${reason}` };
  }
  answer.plugin = (await pluginFiles(root, gate)) ?? null;
  // The root's own manifest first, then every plugin's the walk finds, as upstream.
  if (answer.plugin) answer.namespaceManifests.push(answer.plugin.manifest);
  const files = await walkedFiles(root, gate).catch(() => []);
  for (const file of skillsOf(files)) {
    const instructions = await text(file, gate);
    if (!instructions) continue;
    const metadata = (await text(join(dirname(file), "agents", "openai.yaml"), gate)) ?? null;
    answer.skills.push({ instructions, metadata } satisfies RootSkill);
  }
  for (const dir of pluginDirsOf(files)) {
    const manifest = (await pluginFiles(dir, gate))?.manifest;
    if (manifest && manifest.path !== answer.plugin?.manifest.path) {
      answer.namespaceManifests.push(manifest);
    }
  }
  return answer;
}
