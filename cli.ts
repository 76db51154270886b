/**
 * The `exec-server` command.
 *
 * ```sh
 * deno run -A cli.ts --help
 * ssh host exec-server          # JSON-RPC on stdio
 * exec-server --listen ws://127.0.0.1:0 --token-file ./token
 * ```
 *
 * @module
 */
import process from "node:process";
import { bwrapSupport } from "./src/process/sandbox/bwrap_support.ts";

const args = process.argv.slice(2);
// Whether sandboxes can run here takes a few short bubblewrap runs; they
// go on while the server loads, so the first initialize need not wait.
if (!args.some((a) => /^(-h|-V|--help|--version)$/.test(a))) void bwrapSupport();
const { main } = await import("./src/cli/main.ts");
const code = await main(args);
process.exit(code);
