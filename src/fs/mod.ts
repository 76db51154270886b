/**
 * The filesystem contract and its local implementation.
 *
 * @module
 */
export {
  type CopyOptions,
  type CreateDirectoryOptions,
  type DirectoryEntry,
  type FileMetadata,
  type FileSystem,
  FileSystemError,
  type FileSystemErrorKind,
  type RemoveOptions,
} from "./types.ts";
export {
  DEFAULT_MAX_READ_FILE_BYTES,
  LocalFileSystem,
  type LocalFileSystemOptions,
} from "./local.ts";
