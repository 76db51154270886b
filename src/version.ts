/**
 * The package version, kept equal to `deno.json` and `package.json` (a test
 * checks it).
 *
 * @module
 */

/** This package's version. */
export const VERSION = "0.2.0";

/** The server's name in `initialize` results. */
export const SERVER_NAME = "exec-server";
