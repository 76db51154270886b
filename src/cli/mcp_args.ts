/**
 * Command-line parsing for `exec-server mcp`: where the MCP clients come
 * from (stdio, or Streamable HTTP), where the tools act (this host, a
 * websocket server, an ssh host), and what they may do there.
 *
 * @module
 */
import { parseArgs } from "node:util";
import type { LogLevel } from "../server/logger.ts";
import { parseLogLevel, UsageError } from "./args.ts";

/** Where MCP clients connect. */
export type McpListen =
  | { kind: "stdio" }
  | { kind: "http"; hostname: string; port: number; path: string };

/** Where the tools act. */
export type McpTargetSpec =
  | { kind: "local" }
  | { kind: "ws"; url: string; tokenFile?: string }
  | {
    kind: "ssh";
    destination: string;
    sshOptions: string[];
    remoteBinary?: string;
    bootstrap?: string;
  };

/** The parsed `exec-server mcp` command line. */
export interface McpCliOptions {
  /** `--help`. */
  help: boolean;
  /** `--listen`. */
  listen: McpListen;
  /** `--token-file` (HTTP listener). */
  tokenFile?: string;
  /** `--no-auth` (HTTP listener). */
  noAuth: boolean;
  /** `--allow-origin`, repeatable. */
  allowOrigins: string[];
  /** `--connect`/`--ssh`, or this host. */
  target: McpTargetSpec;
  /** The sandbox (`--sandbox`, `--write`, `--deny`, `--allow-network`), or null. */
  sandbox: { write: string[]; deny: string[]; network: boolean } | null;
  /** `--read-only`. */
  readOnly: boolean;
  /** `--root`. */
  root?: string;
  /** `--strip-ansi`. */
  stripAnsi: boolean;
  /** `--log-level`. */
  logLevel: LogLevel;
}

/** The text of `exec-server mcp --help`. */
export const MCP_HELP = `exec-server mcp: an MCP server for running commands and using files

Usage: exec-server mcp [--listen stdio://|http://HOST:PORT/PATH] [target] [flags]

Tools: exec_command, write_stdin, list_sessions, kill_session, read_file,
write_file, edit_file, list_directory, search_files, get_file_info,
create_directory, move_file, remove. No telemetry: nothing leaves this
process but the answers to its client and the calls to its target.

Clients:
  --listen URL            stdio:// (default) or http://HOST:PORT/PATH (Streamable HTTP;
                          loopback unless a token file is given)
  --token-file PATH       http: the bearer token clients must send (default on loopback:
                          a generated token printed to stderr)
  --no-auth               http: accept clients without a token (trusted setups only)
  --allow-origin ORIGIN   http: accept browser requests from ORIGIN (repeatable)

Target (default: this host, with an exec-server in this process):
  --connect ws://HOST:PORT     an exec-server listening on a websocket
  --connect-token-file PATH    its bearer token
  --ssh [USER@]HOST            an ssh host, running exec-server there
  --ssh-option KEY=VALUE       an ssh -o option, e.g. Port=2222 (repeatable)
  --remote-binary CMD          the remote command (default: exec-server, or this binary
                               uploaded when exec-server runs as a single executable)
  --bootstrap PATH             upload this binary (or a directory of exec-server-<target>
                               binaries) to the ssh host when its cache lacks it

What the tools may do:
  --sandbox               run every command and file operation in a bubblewrap sandbox:
                          the whole machine readable, nothing writable, no network
  --write DIR             the sandbox may write DIR (repeatable; implies --sandbox)
  --deny DIR              the sandbox may neither read nor write DIR (repeatable)
  --allow-network         the sandbox may use the network
  --read-only             offer only the tools that change nothing
  --root DIR              resolve relative paths, and run commands, in DIR
  --strip-ansi            strip terminal escape sequences from tty output

Other:
  --log-level LEVEL       off, error, warn (default), info, debug
  --help                  print this help, then exit
`;

/** Parse `--listen` for `mcp`. */
export function parseMcpListen(text: string): McpListen {
  if (text === "stdio://" || text === "stdio") return { kind: "stdio" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--listen is not a valid URL: ${JSON.stringify(text)}`);
  }
  if (url.protocol !== "http:") {
    throw new UsageError(
      `--listen must be stdio:// or http://HOST:PORT/PATH, got ${JSON.stringify(text)}`,
    );
  }
  const port = /^http:\/\/(?:\[[^\]]+\]|[^/:]+):(\d+)/.exec(text);
  if (!port) {
    throw new UsageError(
      `--listen http:// needs a port (0 picks one), got ${JSON.stringify(text)}`,
    );
  }
  if (url.search || url.hash) {
    throw new UsageError(`--listen takes no query, got ${JSON.stringify(text)}`);
  }
  const path = url.pathname === "/" || url.pathname === "" ? "/mcp" : url.pathname;
  return {
    kind: "http",
    hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: Number(port[1]),
    path,
  };
}

function absolute(flag: string, value: string): string {
  if (!value.startsWith("/")) {
    throw new UsageError(`--${flag} must be an absolute path, got ${JSON.stringify(value)}`);
  }
  return value;
}

function target(v: Record<string, unknown>): McpTargetSpec {
  const connect = v.connect as string | undefined;
  const ssh = v.ssh as string | undefined;
  if (connect !== undefined && ssh !== undefined) {
    throw new UsageError("--connect and --ssh exclude each other: choose one target");
  }
  const sshOnly = ["ssh-option", "remote-binary", "bootstrap"].filter((f) => v[f] !== undefined);
  if (ssh === undefined && sshOnly.length) {
    throw new UsageError(`--${sshOnly[0]} needs --ssh`);
  }
  if (connect === undefined && v["connect-token-file"] !== undefined) {
    throw new UsageError("--connect-token-file needs --connect");
  }
  if (connect !== undefined) {
    if (!/^wss?:\/\//.test(connect)) {
      throw new UsageError(
        `--connect must be a ws:// or wss:// URL, got ${JSON.stringify(connect)}`,
      );
    }
    return { kind: "ws", url: connect, tokenFile: v["connect-token-file"] as string | undefined };
  }
  if (ssh === undefined) return { kind: "local" };
  if (ssh === "" || ssh.startsWith("-")) {
    throw new UsageError(`--ssh needs a host, got ${JSON.stringify(ssh)}`);
  }
  const sshOptions = (v["ssh-option"] as string[] | undefined ?? []).map((o) => {
    if (!/^[A-Za-z]+=./.test(o)) {
      throw new UsageError(`--ssh-option must be KEY=VALUE, got ${JSON.stringify(o)}`);
    }
    return o;
  });
  if (v["remote-binary"] !== undefined && v.bootstrap !== undefined) {
    throw new UsageError("--remote-binary and --bootstrap exclude each other");
  }
  return {
    kind: "ssh",
    destination: ssh,
    sshOptions,
    remoteBinary: v["remote-binary"] as string | undefined,
    bootstrap: v.bootstrap as string | undefined,
  };
}

/**
 * Parse the arguments after `mcp`.
 *
 * @throws {UsageError} for unknown flags or bad values
 */
export function parseMcpArgs(args: string[]): McpCliOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: "boolean", short: "h" },
        listen: { type: "string" },
        "token-file": { type: "string" },
        "no-auth": { type: "boolean" },
        "allow-origin": { type: "string", multiple: true },
        connect: { type: "string" },
        "connect-token-file": { type: "string" },
        ssh: { type: "string" },
        "ssh-option": { type: "string", multiple: true },
        "remote-binary": { type: "string" },
        bootstrap: { type: "string" },
        sandbox: { type: "boolean" },
        write: { type: "string", multiple: true },
        deny: { type: "string", multiple: true },
        "allow-network": { type: "boolean" },
        "read-only": { type: "boolean" },
        root: { type: "string" },
        "strip-ansi": { type: "boolean" },
        "log-level": { type: "string" },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const v = parsed.values;
  const logLevel = parseLogLevel(v["log-level"]);
  const listen = parseMcpListen(v.listen ?? "stdio://");
  if (listen.kind === "stdio" && (v["token-file"] || v["no-auth"] || v["allow-origin"])) {
    throw new UsageError("--token-file, --no-auth and --allow-origin need --listen http://...");
  }
  const write = (v.write ?? []).map((d) => absolute("write", d));
  const deny = (v.deny ?? []).map((d) => absolute("deny", d));
  const sandboxed = v.sandbox === true || write.length > 0 || deny.length > 0;
  if (!sandboxed && v["allow-network"]) throw new UsageError("--allow-network needs --sandbox");
  return {
    help: v.help ?? false,
    listen,
    tokenFile: v["token-file"],
    noAuth: v["no-auth"] ?? false,
    allowOrigins: v["allow-origin"] ?? [],
    target: target(v),
    sandbox: sandboxed ? { write, deny, network: v["allow-network"] ?? false } : null,
    readOnly: v["read-only"] ?? false,
    root: v.root === undefined ? undefined : absolute("root", v.root),
    stripAnsi: v["strip-ansi"] ?? false,
    logLevel,
  };
}
