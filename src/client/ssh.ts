/**
 * The command line that runs a server on another host through OpenSSH:
 * `ssh -T [sshArgs] -- destination binary [serverArgs]`.
 *
 * @module
 */

/** How to reach the remote server. */
export interface SshCommandOptions {
  /**
   * The remote command that starts the server (default `"exec-server"`).
   * It is handed to the remote shell as written, so `~/bin/exec-server` or
   * `deno run -A /opt/exec-server/cli.ts` work.
   */
  binary?: string;
  /** Arguments for the server, each quoted for the remote shell. */
  serverArgs?: string[];
  /** Options for `ssh` itself, placed before the destination (e.g. `["-p", "2222"]`). */
  sshArgs?: string[];
  /** The ssh program (default `"ssh"`). */
  sshCommand?: string;
}

/**
 * Quote one word for a POSIX shell (and for bash and zsh, whatever the
 * remote login shell is). A word is left bare only when it is made of
 * characters no shell treats specially; `=` may not lead it, since zsh
 * expands `=ls` to the path of `ls`.
 */
export function shellQuote(word: string): string {
  if (/^[\w@%+:,./-][\w@%+=:,./-]*$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The program and arguments that run the server on `destination`.
 * `-T` keeps ssh from allocating a terminal, which would mangle the
 * byte stream.
 *
 * @example
 * ```ts
 * import { sshCommandLine } from "./ssh.ts";
 * sshCommandLine("me@box", { sshArgs: ["-p", "2222"] });
 * // ["ssh", ["-T", "-p", "2222", "--", "me@box", "exec-server"]]
 * ```
 * @throws {TypeError} for an empty destination or one that starts with `-`
 */
export function sshCommandLine(
  destination: string,
  opts: SshCommandOptions = {},
): [string, string[]] {
  if (typeof destination !== "string" || destination === "" || destination.startsWith("-")) {
    // A leading "-" would be read by ssh as an option (e.g. -oProxyCommand=...).
    throw new TypeError(`invalid ssh destination ${JSON.stringify(destination)}`);
  }
  const binary = opts.binary ?? "exec-server";
  if (binary.trim() === "") throw new TypeError("binary must not be empty");
  const remote = [binary, ...(opts.serverArgs ?? []).map(shellQuote)].join(" ");
  return [
    opts.sshCommand ?? "ssh",
    ["-T", ...(opts.sshArgs ?? []), "--", destination, remote],
  ];
}
