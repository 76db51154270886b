/**
 * The server side: sessions, the process table, and options.
 *
 * @module
 */
export { ExecServer } from "./server.ts";
export { capabilities, type SandboxCapability, sandboxCapability, Session } from "./session.ts";
export { DEFAULT_SERVER_OPTIONS, resolveServerOptions, type ServerOptions } from "./options.ts";
export { createLogger, LOG_LEVELS, type Logger, type LogLevel } from "./logger.ts";
export { type NotificationSink, ProcessTable } from "./process_table.ts";
export { fsMethods } from "./fs_methods.ts";
export {
  type MethodHandler,
  type ProcessMethodOptions,
  processMethods,
} from "./process_methods.ts";
