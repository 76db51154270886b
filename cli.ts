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
import { main } from "./src/cli/main.ts";

const code = await main(process.argv.slice(2));
process.exit(code);
