/**
 * The remote script's `error KIND DETAIL` lines as {@linkcode BootstrapError}s
 * whose messages say what to do about them: the script knows what failed,
 * the client knows which files were offered and which options were given.
 *
 * @module
 */
import type { Candidate } from "./candidates.ts";
import { BootstrapError } from "./errors.ts";
import {
  type BinaryPlatform,
  describePlatforms,
  TARGET_PLATFORMS,
  targetOfPlatform,
} from "./platform.ts";

/** What the client knows when the remote reports a failure. */
export interface FailureContext {
  /** The ssh destination. */
  host: string;
  /** The remote binary's path, once the remote named it. */
  remotePath: string | undefined;
  /** Every binary offered. */
  candidates: Candidate[];
  /** The one the remote chose, once it did. */
  chosen: Candidate | undefined;
  /** Whether the caller gave `bootstrap.remoteDir`. */
  remoteDirGiven: boolean;
  /** Why ssh ended, with the tail of its stderr. */
  explainEnd: () => Promise<string | undefined>;
}

/**
 * The error for the script's `error KIND DETAIL`, or undefined for a kind
 * the client does not know (the caller reports the line as it is).
 */
export async function remoteFailure(
  kind: string,
  detail: string,
  ctx: FailureContext,
): Promise<BootstrapError | undefined> {
  const { host } = ctx;
  const at = { remotePath: ctx.remotePath };
  switch (kind) {
    case "platform":
      return new BootstrapError(host, "platform", platformMessage(detail, ctx.candidates), {
        remotePlatform: detail,
      });
    case "directory":
      return new BootstrapError(
        host,
        "directory",
        `no usable cache directory${
          ctx.remoteDirGiven ? "" : " (pass bootstrap.remoteDir)"
        }: ${detail}`,
      );
    case "write":
      return new BootstrapError(
        host,
        "write",
        `writing ${detail} failed (disk full?); ${await ctx.explainEnd()}`,
        at,
      );
    case "verify":
      return new BootstrapError(host, "verify", verifyMessage(detail, ctx.chosen), at);
    case "install":
      return new BootstrapError(
        host,
        "install",
        `cannot chmod or rename the upload into place; ${await ctx.explainEnd()}`,
        at,
      );
    case "noexec":
      return new BootstrapError(
        host,
        "noexec",
        "the file cannot be executed (its filesystem is mounted noexec?)",
        at,
      );
  }
  return undefined;
}

function verifyMessage(detail: string, chosen: Candidate | undefined): string {
  if (detail === "unpack") return "the upload arrived damaged: gzip could not unpack it";
  const { size, sha256 } = chosen?.binary ?? { size: "?", sha256: "?" };
  return `the upload arrived damaged: ${detail} of ${size} bytes, or a sha256 other than ${sha256}`;
}

/**
 * Which platform the remote is, what was offered instead, and how to get
 * a binary for it, e.g. `the remote is Linux/x86_64, but the binaries
 * offered are for linux-arm64 (dist/a), darwin-arm64 (dist/b); build one
 * with ...`.
 */
function platformMessage(remote: string, candidates: Candidate[]): string {
  const slash = remote.indexOf("/");
  const platform: BinaryPlatform = { os: remote.slice(0, slash), arch: remote.slice(slash + 1) };
  const wanted = targetOfPlatform(platform);
  const offered = candidates.length === 1
    ? `${candidates[0].binary.path} is built for ${
      describePlatforms(candidates[0].platforms ?? [])
    }`
    : `the binaries offered are for ${
      candidates.map((c) => `${c.target} (${c.binary.path})`).join(", ")
    }`;
  const fix = wanted === undefined
    ? `exec-server binaries are built for ${Object.keys(TARGET_PLATFORMS).join(", ")} only`
    : `build one with \`npx deno task build:binary --target ${wanted}\` and add it to ` +
      `bootstrap.binaries as "${wanted}"`;
  return `the remote is ${remote}, but ${offered}; ${fix}`;
}
