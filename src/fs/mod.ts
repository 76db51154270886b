/**
 * The filesystem contract and its local implementation.
 *
 * @module
 */
export * from "./types.ts";
export {
  DEFAULT_MAX_READ_FILE_BYTES,
  LocalFileSystem,
  type LocalFileSystemOptions,
} from "./local.ts";
