/**
 * Connecting over a pair of byte streams (the pipes of a server you
 * started yourself).
 *
 * @module
 */
import { StdioConnection } from "../../transport/stdio.ts";
import type { StdioClientOptions } from "../options.ts";
import { CLIENT_MAX_MESSAGE_BYTES, type OpenedConnection } from "./opened.ts";

/** Newline-delimited JSON over `readable` and `writable`. */
export function openStdio(
  readable: ReadableStream<Uint8Array>,
  writable: WritableStream<Uint8Array>,
  opts: StdioClientOptions,
): OpenedConnection {
  const connection = new StdioConnection(readable, writable, {
    maxMessageBytes: opts.maxMessageBytes ?? CLIENT_MAX_MESSAGE_BYTES,
  });
  return { connection, lifetime: { target: "the stdio server" } };
}
