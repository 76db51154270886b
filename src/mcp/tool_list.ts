/**
 * The MCP tools: names, parameters and annotations are a contract (agents'
 * prompts and configs name them); descriptions are short because every
 * client puts the whole list into every model context.
 *
 * @module
 */

/** One tool as `tools/list` shows it. */
export interface ToolDescriptor {
  /** The tool's name. */
  name: string;
  /** What it does, for the model. */
  description: string;
  /** Its parameters, as JSON Schema. */
  inputSchema: { type: "object"; properties: Record<string, unknown>; required?: string[] };
  /** Hints for the client's approval policy. */
  annotations: {
    readOnlyHint: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

const str = (description: string) => ({ type: "string", description });
const int = (description: string) => ({ type: "integer", description });
const path = str("Absolute path");

const reads = { readOnlyHint: true };
const writes = { readOnlyHint: false, destructiveHint: true };

/** The most a call may wait for a command, in ms. */
export const MAX_YIELD_MS = 30_000;
/** How long `exec_command` waits by default, in ms. */
export const EXEC_YIELD_MS = 10_000;
/** How long `write_stdin` waits by default, in ms. */
export const STDIN_YIELD_MS = 1_000;
/** Output a call returns by default, in bytes. */
export const DEFAULT_OUTPUT_BYTES = 20_000;
/** The most output a call may ask for, in bytes. */
export const MAX_OUTPUT_BYTES = 1024 * 1024;

const yieldMs = int(
  `Wait at most this long for the command to finish (ms, max ${MAX_YIELD_MS})`,
);
const maxOutput = int(
  `Output to return (bytes, default ${DEFAULT_OUTPUT_BYTES}); beyond it the start and end are kept`,
);
const sessionId = int("Session of a running command, from exec_command");

/** Every tool, in the order `tools/list` shows them. */
export const TOOLS: readonly ToolDescriptor[] = [
  {
    name: "exec_command",
    description:
      "Run a command. Returns its output and exit code, or a session_id if it is still running " +
      "after yield_time_ms (default 10000): poll it with write_stdin.",
    inputSchema: {
      type: "object",
      properties: {
        cmd: str("Shell command, run by the user's login shell"),
        argv: { type: "array", items: { type: "string" }, description: "Program and arguments" },
        workdir: str("Working directory (default: the root, else home)"),
        env: {
          type: "object",
          additionalProperties: { type: "string" },
          description: "Extra environment variables",
        },
        tty: { type: "boolean", description: "Run on a terminal (default false)" },
        yield_time_ms: yieldMs,
        max_output_bytes: maxOutput,
      },
    },
    annotations: { ...writes, openWorldHint: true },
  },
  {
    name: "write_stdin",
    description:
      'Write to a running session\'s stdin ("" only polls), then return its output since the ' +
      "last read, and the exit code once it has finished.",
    inputSchema: {
      type: "object",
      properties: {
        session_id: sessionId,
        chars: str("Text to write; use \\u0003 for Ctrl-C, \\u0004 for EOF on a tty"),
        yield_time_ms: yieldMs,
        max_output_bytes: maxOutput,
      },
      required: ["session_id"],
    },
    annotations: { ...writes, openWorldHint: true },
  },
  {
    name: "list_sessions",
    description: "List the sessions: running commands and finished ones with unread output.",
    inputSchema: { type: "object", properties: {} },
    annotations: reads,
  },
  {
    name: "kill_session",
    description: "Kill a session's whole process tree, or send it a signal.",
    inputSchema: {
      type: "object",
      properties: { session_id: sessionId, signal: str("e.g. SIGINT (default: kill the tree)") },
      required: ["session_id"],
    },
    annotations: writes,
  },
  {
    name: "read_file",
    description:
      "Read a text file (images come back as images). offset/length, head and tail count lines.",
    inputSchema: {
      type: "object",
      properties: {
        path,
        offset: int("First line to read, from 1"),
        length: int("Lines to read"),
        head: int("Read only the first N lines"),
        tail: int("Read only the last N lines"),
      },
      required: ["path"],
    },
    annotations: reads,
  },
  {
    name: "write_file",
    description: "Create or replace a file (atomically), or append to it.",
    inputSchema: {
      type: "object",
      properties: { path, content: str("The text"), append: { type: "boolean" } },
      required: ["path", "content"],
    },
    annotations: writes,
  },
  {
    name: "edit_file",
    description:
      "Replace text in a file: each oldText must occur exactly once. Returns a unified diff.",
    inputSchema: {
      type: "object",
      properties: {
        path,
        edits: {
          type: "array",
          items: {
            type: "object",
            properties: { oldText: { type: "string" }, newText: { type: "string" } },
            required: ["oldText", "newText"],
          },
        },
        dryRun: { type: "boolean", description: "Show the diff without writing" },
      },
      required: ["path", "edits"],
    },
    annotations: writes,
  },
  {
    name: "list_directory",
    description: "List a directory; depth > 1 lists below it too. Directories end in /.",
    inputSchema: {
      type: "object",
      properties: { path, depth: int("Levels to list (default 1)") },
      required: ["path"],
    },
    annotations: reads,
  },
  {
    name: "search_files",
    description: "Find files and directories below path whose path matches a glob (**/*.ts).",
    inputSchema: {
      type: "object",
      properties: {
        path,
        pattern: str("Glob; without / it matches names at any depth"),
        exclude: { type: "array", items: { type: "string" }, description: "Globs to leave out" },
      },
      required: ["path", "pattern"],
    },
    annotations: reads,
  },
  {
    name: "get_file_info",
    description: "Type, size and times of a file or directory.",
    inputSchema: { type: "object", properties: { path }, required: ["path"] },
    annotations: reads,
  },
  {
    name: "create_directory",
    description: "Create a directory and any missing parents.",
    inputSchema: { type: "object", properties: { path }, required: ["path"] },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  },
  {
    name: "move_file",
    description: "Move or rename a file or directory; fails if the destination exists.",
    inputSchema: {
      type: "object",
      properties: { source: path, destination: path },
      required: ["source", "destination"],
    },
    annotations: writes,
  },
  {
    name: "remove",
    description: "Delete a file, or a directory with recursive.",
    inputSchema: {
      type: "object",
      properties: { path, recursive: { type: "boolean" } },
      required: ["path"],
    },
    annotations: writes,
  },
];

/**
 * The tools a server offers: all, or with `readOnly` only those that change
 * nothing; with a `root`, path parameters say that relative paths resolve
 * against it.
 */
export function toolsFor(readOnly: boolean, root?: string): ToolDescriptor[] {
  const tools = TOOLS.filter((t) => !readOnly || t.annotations.readOnlyHint);
  if (root === undefined) return tools;
  const relative = `Path, absolute or relative to ${root}`;
  return tools.map((t) => {
    const properties = Object.fromEntries(
      Object.entries(t.inputSchema.properties).map(([k, v]) => [
        k,
        (v as { description?: string }).description === path.description
          ? { ...v as object, description: relative }
          : v,
      ]),
    );
    return { ...t, inputSchema: { ...t.inputSchema, properties } };
  });
}
