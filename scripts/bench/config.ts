/**
 * The benchmark's command-line flags and the sizes that follow from them.
 * Parsed once by the entry point and passed to every measurement, so that
 * the measurements do not read `process.argv` themselves.
 *
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";

/** The repository root, for the default server command. */
const ROOT = new URL("../../", import.meta.url).pathname;

/** One mebibyte, the unit of every size and rate the bench prints. */
export const MiB = 1024 * 1024;

/** The size of the file written and read through the fs methods. */
export const FILE_BYTES = 64 * MiB;

/**
 * The environment of every child, the server's and the floors' alike, so
 * that both sides look up the same binaries.
 */
export const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin" };

/** What the flags ask for. */
export interface BenchConfig {
  /** `--json`: print the results as JSON on stdout. */
  json: boolean;
  /** `--out FILE`: write the JSON results to a file. */
  out?: string;
  /** `--quick`: fewer rounds and a smaller stream. */
  quick: boolean;
  /** `--server-cmd "CMD ARGS"`: the server to measure. */
  serverCmd: string[];
  /** Bytes streamed through each throughput round. */
  streamBytes: number;
  /**
   * `--codex`: open the session with the Codex CLI's `initialize`, so this
   * server speaks the dialect the upstream server speaks (which the client
   * detects by itself) and both are measured alike.
   */
  codex: boolean;
}

/** Parses the flags (`process.argv.slice(2)`). */
export function parseConfig(argv: string[]): BenchConfig {
  const args = parseArgs({
    args: argv,
    options: {
      json: { type: "boolean" },
      out: { type: "string" },
      quick: { type: "boolean" },
      "server-cmd": { type: "string" },
      codex: { type: "boolean" },
    },
  });
  const quick = args.values.quick ?? false;
  const serverCmd = args.values["server-cmd"]?.split(" ").filter(Boolean) ??
    // Exited processes are retained 30 s by default; the bench starts
    // hundreds per second, so it asks for a short retention instead.
    // The V8 flag is the one `deno task start` runs the server with.
    [
      process.execPath,
      "run",
      "-A",
      "--v8-flags=--max-semi-space-size=1",
      join(ROOT, "cli.ts"),
      "--exited-retention-ms",
      "200",
    ];
  return {
    json: args.values.json ?? false,
    out: args.values.out,
    quick,
    serverCmd,
    streamBytes: quick ? 64 * MiB : 256 * MiB,
    codex: args.values.codex ?? false,
  };
}
