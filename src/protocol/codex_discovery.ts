/**
 * The Codex dialect's capability discovery (0.171): `capabilities/discoverV2`
 * lists what is installed on the host for every project (plugins under
 * `$CODEX_HOME/plugins/cache`, skills under `$CODEX_HOME/skills` and
 * `~/.agents/skills`), parsed; `capabilityRoots/discoverV1` returns the raw
 * files below roots the client names. Shapes as the real server answers
 * them.
 *
 * @module
 */
import type { RequestType } from "./descriptors.ts";

/** A file and its text. */
export interface FileContents {
  /** A `file://` URI. */
  path: string;
  /** Its contents, as UTF-8 text. */
  contents: string;
}

/** The files that make a directory a plugin. */
export interface PluginFiles {
  /** `.codex-plugin/plugin.json`, `.claude-plugin/plugin.json` or `.cursor-plugin/plugin.json`. */
  manifest: FileContents;
  /** `.mcp.json` beside the manifest's directory, if any. */
  mcpConfig: FileContents | null;
  /** `.app.json`, if any. */
  appsConfig: FileContents | null;
}

/** A skill, its front matter read. */
export interface DiscoveredSkill {
  /** Its name (a plugin's skills are `<plugin>:<skill>`). */
  name: string;
  /** What it is for. */
  description: string;
  /** `metadata.short-description` of its front matter, if any. */
  shortDescription: string | null;
  /** Its `SKILL.md`, a `file://` URI. */
  path: string;
  /** Not read by this server (always null). */
  dependencies: null;
  /** Not read by this server (always null). */
  policy: null;
  /** Where it was found, for a skill outside a plugin. */
  discoveryRoot?: { id: string; path: string };
}

/** An installed plugin. */
export interface DiscoveredPlugin {
  /** `<name>@<marketplace>`, from its directories. */
  id: string;
  /** The manifest's `name`, else the version directory's name. */
  displayName: string;
  /** Always null here. */
  remotePluginId: null;
  /** The version directory's name. */
  version: string;
  /** The version directory, a `file://` URI. */
  root: string;
  /** Its files. */
  files: PluginFiles;
  /** Its skills. */
  skills: DiscoveredSkill[];
}

/** Params of `capabilities/discoverV2`. */
export interface DiscoverV2Params {
  /** The client's working directory (a `file://` URI). */
  cwd: string;
  /** The sandbox the reads must respect, or null. */
  sandbox?: unknown;
}

/** Result of `capabilities/discoverV2`. */
export interface DiscoverV2Result {
  /** Installed plugins, by id. */
  plugins: DiscoveredPlugin[];
  /** Skills of the host's skill roots. */
  skills: DiscoveredSkill[];
  /** One line per area where something could not be loaded. */
  warnings: string[];
}

/** A root to discover below. */
export interface CapabilityRootParams {
  /** The client's id for it, echoed. */
  id: string;
  /** A `file://` URI. */
  path: string;
  /** The sandbox the reads must respect, or null. */
  sandbox?: unknown;
}

/** A skill below a root, unparsed. */
export interface RootSkill {
  /** Its `SKILL.md`. */
  instructions: FileContents;
  /** Its `agents/openai.yaml`, if any. */
  metadata: FileContents | null;
}

/** What was found below one root. */
export interface DiscoveredRoot {
  /** As asked. */
  id: string;
  /** As asked. */
  path: string;
  /** The root's own plugin files, if it is a plugin. */
  plugin: PluginFiles | null;
  /** Every `SKILL.md` below it, hidden directories included, by path. */
  skills: RootSkill[];
  /**
   * The plugin manifests that name the skills below them: the root's own
   * first, then every one the walk below the root finds, by path.
   */
  namespaceManifests: FileContents[];
  /** Problems that did not stop the discovery. */
  warnings: string[];
  /** Why the root could not be inspected, or null. */
  error: string | null;
}

/** The discovery requests. */
export const DiscoveryRequests: {
  readonly discoverV2: RequestType<DiscoverV2Params, DiscoverV2Result>;
  readonly discoverRootsV1: RequestType<
    { roots: CapabilityRootParams[] },
    { roots: DiscoveredRoot[] }
  >;
} = Object.freeze({
  discoverV2: Object.freeze({ method: "capabilities/discoverV2", kind: "request" as const }),
  discoverRootsV1: Object.freeze({
    method: "capabilityRoots/discoverV1",
    kind: "request" as const,
  }),
});

/** The manifests that make a directory a plugin, in the order they are looked for. */
export const PLUGIN_MANIFESTS: readonly string[] = Object.freeze([
  ".codex-plugin/plugin.json",
  ".claude-plugin/plugin.json",
  ".cursor-plugin/plugin.json",
]);

/** The warning of a discovery that could not load something. */
export const DISCOVERY_WARNING =
  "some capability metadata could not be loaded; discovery may be incomplete";
