/**
 * One connection's session: the handshake gate, method routing, and the
 * connection's process table. Transport-agnostic: it reads frames from and
 * writes frames to a {@linkcode FrameConnection}.
 *
 * @module
 */
import { LocalFileSystem } from "../fs/local.ts";
import { ErrorCode, invalidParams, invalidRequest, RpcError } from "../protocol/errors.ts";
import { type InitializeResult, Method, PROTOCOL_VERSION } from "../protocol/methods.ts";
import { paramsObject, requireString } from "../protocol/validate.ts";
import { show } from "../protocol/show.ts";
import { type CodexInitializeResult, isCodexInitialize } from "../protocol/codex.ts";
import type { FrameConnection } from "../rpc/connection.ts";
import { RpcPeer } from "../rpc/peer.ts";
import { SERVER_NAME, VERSION } from "../version.ts";
import { fsMethods } from "./fs_methods.ts";
import { withSandboxGate } from "./fs_sandbox.ts";
import { bwrapSupport } from "../process/sandbox/bwrap_support.ts";
import { checkSandboxParams } from "../protocol/sandbox_params.ts";
import type { ServerOptions } from "./options.ts";
import { type MethodHandler, processMethods } from "./process_methods.ts";
import { ProcessTable } from "./process_table.ts";
import { environmentInfo } from "./environment_info.ts";
import { walkHandler } from "./walk_methods.ts";
import { HttpRequests } from "./http_methods.ts";
import { MAX_OPEN_HANDLES } from "../protocol/file_handles.ts";
import {
  fileHandleCapability,
  fileHandleMethods,
  sessionFileHandles,
} from "./file_handle_methods.ts";
import { FsWalk } from "../protocol/walk.ts";
import { type ResumableSession, SessionRegistry } from "./resumable.ts";

/** A v0 request's `sandbox` member, read. */
const v0Sandbox = (value: unknown) => checkSandboxParams(value);

type HandshakeState = "new" | "initializing" | "ready";

/** How long answers to requests received before the end may still take. */
const SETTLE_ON_CLOSE_MS = 10_000;

/** What `initialize.capabilities.sandbox` says of this host. */
export type SandboxCapability =
  | { available: true; type: "bubblewrap"; version: string; arg0: boolean }
  | { available: false; reason: string };

/** Whether this host can run sandboxed processes (found out once, on first use). */
export async function sandboxCapability(): Promise<SandboxCapability> {
  const support = await bwrapSupport();
  return support.available
    ? { available: true, type: "bubblewrap", version: support.version, arg0: support.argv0 }
    : { available: false, reason: support.reason };
}

/**
 * Everything a session advertises in `initialize.capabilities`;
 * `binaryFrames` where its connection carries them (stdio and websocket,
 * not in process).
 */
export function capabilities(
  opts: ServerOptions,
  methods: string[],
  sandbox?: SandboxCapability,
  binaryFrames = false,
): Record<string, unknown> {
  return {
    methods: [...methods].sort(),
    ...(sandbox ? { sandbox } : {}),
    processStart: { pipeStdin: true, size: true, arg0: "pipe" },
    processOutput: { seq: true },
    processExited: { signal: true, timing: true },
    processRead: { evicted: true, exitedAfterLastChunk: true },
    processTerminate: { graceMs: true },
    processSignal: { names: "POSIX", interrupt: true },
    flowControl: true,
    errno: true,
    fileUris: true,
    fs: { rangedRead: true, append: true, writeOffset: true, rename: true },
    limits: {
      maxProcesses: opts.maxProcesses,
      maxExitedProcesses: opts.maxExitedProcesses,
      maxExitedOutputBytes: opts.maxExitedOutputBytes,
      maxMessageBytes: opts.maxMessageBytes,
      maxOutputBytes: opts.maxOutputBytes,
      exitedRetentionMs: opts.exitedRetentionMs,
      maxReadFileBytes: opts.maxReadFileBytes,
    },
    ...(binaryFrames ? { binaryFrames: true } : {}),
    http: { request: true, stream: true, headerEnvVars: true },
    walk: true,
    fileHandles: fileHandleCapability(MAX_OPEN_HANDLES),
  };
}

/**
 * Serve one connection until it ends, then kill every process it started.
 *
 * @example
 * ```ts
 * import { Session } from "./session.ts";
 * import { resolveServerOptions } from "./options.ts";
 * // `conn` is any FrameConnection, e.g. a StdioConnection.
 * declare const conn: import("../rpc/connection.ts").FrameConnection;
 * await new Session(conn, resolveServerOptions()).run();
 * ```
 */
export class Session {
  #conn: FrameConnection;
  #opts: ServerOptions;
  #peer: RpcPeer;
  #table: ProcessTable;
  #http: HttpRequests;
  /** v0's handles live as long as the connection. */
  #handles = sessionFileHandles();
  #handlers: Map<string, MethodHandler>;
  #state: HandshakeState = "new";
  /** Set while the `initialize` answer is being made; requests behind it wait for it. */
  #initializing: Promise<void> | undefined;
  #clientName = "";
  #extraMethods: Map<string, MethodHandler>;
  #registry: SessionRegistry;
  /** Set when the client speaks the Codex dialect. */
  #resumable: ResumableSession | undefined;

  /**
   * Bind a session to a connection.
   *
   * @param registry where Codex-dialect sessions live between connections
   */
  constructor(
    conn: FrameConnection,
    opts: ServerOptions,
    extraMethods: Map<string, MethodHandler> = new Map(),
    registry: SessionRegistry = new SessionRegistry(),
  ) {
    this.#conn = conn;
    this.#opts = opts;
    this.#extraMethods = extraMethods;
    this.#registry = registry;
    // Found out while the client connects, so that `initialize` need not wait.
    void bwrapSupport();
    const sink = {
      send: (text: string) => {
        if (this.#peer.closed) return true;
        return conn.send(text);
      },
      onDrain: (listener: () => void) => conn.onDrain(listener),
    };
    this.#table = new ProcessTable(opts, sink);
    this.#http = new HttpRequests(sink, {
      maxBufferedBytes: opts.maxReadFileBytes,
      readSandbox: v0Sandbox,
    });
    this.#handlers = new Map([
      ...processMethods(this.#table),
      ...withSandboxGate(
        new Map([
          ...fsMethods(new LocalFileSystem({ maxReadFileBytes: opts.maxReadFileBytes })),
          [FsWalk.method, walkHandler({ strict: false, uris: false, readSandbox: v0Sandbox })],
        ]),
        v0Sandbox,
      ),
      ...this.#http.handlers(),
      ...fileHandleMethods(this.#handles, { readSandbox: v0Sandbox }),
      ...extraMethods,
    ]);
    this.#peer = new RpcPeer({
      send: (text) => {
        conn.send(text);
      },
      binaryFrames: conn.binaryFrames === true,
      // Handlers adopt only buffers nobody else holds (fs/readFile's reads).
      releaseSentPayloads: true,
      onRequest: (method, params) => this.#onRequest(method, params),
      onNotification: (method) => this.#onNotification(method),
      onProblem: (message) => opts.logger.warn(message),
    });
  }

  /** The process table (for shutdown and tests). */
  get processes(): ProcessTable {
    return this.#table;
  }

  /** Read frames until the connection ends, then clean up. */
  async run(): Promise<void> {
    try {
      for await (const frame of this.#conn.frames()) {
        switch (frame.kind) {
          case "text":
            this.#peer.receive(frame.text, frame.payload);
            break;
          case "tooLarge":
            this.#opts.logger.warn(`refused a ${frame.bytes}-byte message`);
            this.#peer.sendUnattributedError(
              ErrorCode.InvalidRequest,
              `message too large: ${frame.bytes} bytes exceeds the limit of ${frame.limit} bytes (--max-message-bytes)`,
            );
            break;
          case "badUtf8":
            this.#peer.sendUnattributedError(
              ErrorCode.ParseError,
              `parse error: a ${frame.bytes}-byte message is not valid UTF-8`,
            );
            break;
        }
      }
    } finally {
      this.#opts.logger.info(`connection ${this.#clientName || "(no handshake)"} ended`);
      this.#http.abortAll("the connection ended");
      // Awaited below: a stdio server exits right after, temporary files must be gone.
      const discarded = this.#handles.discardAll();
      if (this.#resumable) {
        // The Codex dialect's session outlives its connection for a while.
        this.#registry.detach(this.#resumable, this.#opts.sessionGraceMs);
      } else {
        // Killing first also wakes waiting reads, so that requests already
        // received (`printf ... | exec-server`) still get their answers.
        await this.#table.closeAll();
      }
      await this.#peer.settled(SETTLE_ON_CLOSE_MS);
      await discarded;
      this.#peer.close("connection ended");
    }
  }

  #onRequest(method: string, params: unknown): unknown {
    if (method === Method.Initialize) return this.#initialize(params);
    const handler = this.#handlers.get(method);
    if (this.#state !== "ready") {
      throw invalidRequest(
        this.#state === "new"
          ? `call initialize first (got ${method})`
          : `send initialized first (got ${method})`,
      );
    }
    if (!handler) {
      throw new RpcError(ErrorCode.MethodNotFound, `unknown method ${method}`);
    }
    // Answers keep the order of a pipelined batch: initialize's comes first.
    if (this.#initializing) return this.#initializing.then(() => handler(params));
    return handler(params);
  }

  #initialize(
    params: unknown,
  ): Promise<InitializeResult> | CodexInitializeResult {
    if (this.#state !== "new") throw invalidRequest("initialize was already called");
    if (isCodexInitialize(params)) return this.#initializeCodex(params);
    const p = paramsObject(params, Method.Initialize);
    this.#clientName = typeof p.clientName === "string" ? p.clientName : "";
    this.#state = "initializing";
    this.#opts.logger.info(`client ${JSON.stringify(this.#clientName)} connected`);
    const methods = [...this.#handlers.keys()];
    // Whether sandboxes can run is found out once per server, while clients connect.
    const answer = sandboxCapability().then((sandbox) => ({
      protocolVersion: PROTOCOL_VERSION,
      serverInfo: { name: SERVER_NAME, version: VERSION },
      capabilities: capabilities(this.#opts, methods, sandbox, this.#conn.binaryFrames === true),
    }));
    const settled = () => {
      this.#initializing = undefined;
    };
    this.#initializing = answer.then(settled, settled);
    return answer;
  }

  /** Attach to a new or a resumed Codex-dialect session. */
  #initializeCodex(params: unknown): CodexInitializeResult {
    const p = paramsObject(params, Method.Initialize);
    const resumeId = p.resumeSessionId;
    // Typed as upstream types them (-32602): clientName a string, the id a string or null.
    if (resumeId !== null && typeof resumeId !== "string") {
      throw invalidParams(`resumeSessionId must be a string or null, got ${show(resumeId)}`);
    }
    const clientName = requireString(p, "clientName");
    const session = resumeId === null
      ? this.#registry.create(this.#opts)
      : this.#registry.resume(resumeId);
    session.attach(this.#conn);
    this.#resumable = session;
    this.#table = session.table;
    this.#handlers = new Map([...session.handlers, ...this.#extraMethods]);
    this.#clientName = clientName;
    this.#state = "initializing";
    this.#opts.logger.info(
      `client ${JSON.stringify(this.#clientName)} ${resumeId ? "resumed" : "opened"} ` +
        `session ${session.id} (Codex dialect)`,
    );
    return { sessionId: session.id, environmentInfo: environmentInfo() };
  }

  #onNotification(method: string): void {
    if (method === Method.Initialized) {
      if (this.#state === "initializing") this.#state = "ready";
      return;
    }
    this.#opts.logger.debug(`ignored notification ${method}`);
  }
}
