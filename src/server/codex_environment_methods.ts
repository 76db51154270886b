/**
 * The Codex dialect's methods about the host rather than one file or
 * process: `environment/info`, `environment/status` and
 * `environmentConfig/read` (see ./environment_config.ts), and capability
 * discovery (`capabilities/discoverV2`, `capabilityRoots/discoverV1`; see
 * ./capability_discovery.ts).
 *
 * @module
 */
import os from "node:os";
import process from "node:process";
import { DiscoveryRequests } from "../protocol/codex_discovery.ts";
import { show } from "../protocol/show.ts";
import { discoverRoot, discoverV2 } from "./capability_discovery.ts";
import { readCodexSandbox } from "./codex_fs_methods.ts";
import { readGateOf } from "./walk_methods.ts";
import { CodexRequests } from "../protocol/codex.ts";
import {
  absolutePath,
  paramsObject,
  requireAbsolutePath,
  requireString,
} from "../protocol/validate.ts";
import { invalidParams } from "../protocol/errors.ts";
import { environmentInfo } from "./environment_info.ts";
import {
  checkTomlPaths,
  type ConfigPlaces,
  hostConfigPlaces,
  readEnvironmentConfig,
} from "./environment_config.ts";
import { addHandler, type MethodHandler } from "./method_handlers.ts";

/** Where the host's configuration is read from (tests give their own). */
export interface EnvironmentMethodsOptions {
  /** Default: `/etc/codex` and `$CODEX_HOME` (or `~/.codex`) of the server's environment. */
  configPlaces?: ConfigPlaces;
}

/**
 * The handlers.
 *
 * @example
 * ```ts
 * import { codexEnvironmentMethods } from "./codex_environment_methods.ts";
 * const handlers = codexEnvironmentMethods();
 * await handlers.get("environment/status")!({}); // { status: "ready" }
 * ```
 */
export function codexEnvironmentMethods(
  options: EnvironmentMethodsOptions = {},
): Map<string, MethodHandler> {
  const handlers = new Map<string, MethodHandler>();
  addHandler(handlers, CodexRequests.environmentInfo, () => environmentInfo());
  // A server that answers at all is ready: it starts nothing in the background.
  addHandler(handlers, CodexRequests.environmentStatus, () => ({ status: "ready" as const }));
  addHandler(handlers, CodexRequests.environmentConfigRead, (params) => {
    const method = CodexRequests.environmentConfigRead.method;
    if (params === undefined || params === null) {
      throw invalidParams(
        `${method}: params must be an object with cwd, configPaths and requirementsPaths`,
      );
    }
    const p = paramsObject(params, method);
    const cwd = requireAbsolutePath(p, "cwd");
    const configPaths = checkTomlPaths(p.configPaths, "configPaths");
    const requirementsPaths = checkTomlPaths(p.requirementsPaths, "requirementsPaths");
    const places = options.configPlaces ?? hostConfigPlaces(process.env);
    return readEnvironmentConfig(places, cwd, configPaths, requirementsPaths);
  });
  addHandler(handlers, DiscoveryRequests.discoverV2, async (params) => {
    const p = paramsObject(params, DiscoveryRequests.discoverV2.method);
    requireAbsolutePath(p, "cwd");
    const gate = await readGateOf(p.sandbox, readCodexSandbox);
    const places = options.configPlaces ?? hostConfigPlaces(process.env);
    return discoverV2(places.codexHome, os.homedir(), gate);
  });
  addHandler(handlers, DiscoveryRequests.discoverRootsV1, async (params) => {
    const method = DiscoveryRequests.discoverRootsV1.method;
    const p = paramsObject(params, method);
    if (!Array.isArray(p.roots)) {
      throw invalidParams(`roots must be an array of {id, path, sandbox}, got ${show(p.roots)}`);
    }
    const roots = p.roots.map((r, i) => {
      const root = paramsObject(r, `roots[${i}]`);
      const id = requireString(root, "id");
      const asked = requireString(root, "path");
      return { id, asked, path: absolutePath(asked, `roots[${i}].path`), sandbox: root.sandbox };
    });
    return {
      roots: await Promise.all(
        roots.map(async (r) =>
          discoverRoot(r.id, r.path, r.asked, await readGateOf(r.sandbox, readCodexSandbox))
        ),
      ),
    };
  });
  return handlers;
}
