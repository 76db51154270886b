/**
 * The exec-server.v0 wire contract: message shapes, method types, error
 * codes and parameter validation. Pure: no I/O.
 *
 * @module
 */
export * from "./errors.ts";
export * from "./messages.ts";
export * from "./methods.ts";
export * from "./descriptors.ts";
export { decodeBase64, encodeBase64, InvalidBase64Error } from "./base64.ts";
