/**
 * Files and folders named on the command line, checked before a command uses them, so a file that cannot be read is
 * said to be that (not found, not readable, a folder where a file was expected, ...) in one line naming the option and
 * the path, never as the parse error of what a library made of its absence.
 */
import { accessSync, constants, readFileSync, statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';

export type FileArgumentCode = 'CLI_FILE_NOT_FOUND' | 'CLI_FILE_NOT_READABLE' | 'CLI_FILE_NOT_WRITABLE' | 'CLI_FILE_IS_DIRECTORY' | 'CLI_FILE_NOT_DIRECTORY' | 'CLI_FILE_UNUSABLE';

/** A file or folder given to an option (or as an argument) that cannot be used as asked; terminal, exit 2. */
export class FileArgumentError extends Error {
  constructor(
    readonly code: FileArgumentCode,
    /** The option (`--key`) or argument (`FILE`) that named it. */
    readonly option: string,
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'FileArgumentError';
  }
}

/** What a file is to the command: its name in messages (`key file`, `export file`, `scenario`, ...). */
export interface FileRole {
  option: string;
  what: string;
}

function refusal(role: FileRole, path: string, error: unknown, expect: 'file' | 'directory'): FileArgumentError {
  const code = (error as { code?: string } | null)?.code;
  const named = `${role.option} ${path}`;
  switch (code) {
    case 'ENOENT':
      return new FileArgumentError('CLI_FILE_NOT_FOUND', role.option, path, `${named}: ${role.what} not found (ENOENT)`);
    case 'EACCES':
    case 'EPERM':
      return new FileArgumentError('CLI_FILE_NOT_READABLE', role.option, path, `${named}: ${role.what} not readable: permission denied (${code})`);
    case 'EISDIR':
      return new FileArgumentError('CLI_FILE_IS_DIRECTORY', role.option, path, `${named}: is a directory, not a file (EISDIR)`);
    case 'ENOTDIR':
      return new FileArgumentError('CLI_FILE_NOT_DIRECTORY', role.option, path, `${named}: ${expect === 'directory' ? `is a file, not a directory` : 'a part of the path is a file, not a directory'} (ENOTDIR)`);
    default:
      return new FileArgumentError('CLI_FILE_UNUSABLE', role.option, path, `${named}: ${role.what} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function statOf(path: string, role: FileRole, expect: 'file' | 'directory'): Stats {
  try {
    return statSync(path);
  } catch (error) {
    throw refusal(role, path, error, expect);
  }
}

/** Checks that `path` is a readable file (not a folder), for a command that reads it later or by a library. */
export function checkReadableFile(path: string, role: FileRole): void {
  const stats = statOf(path, role, 'file');
  if (stats.isDirectory()) throw refusal(role, path, Object.assign(new Error('is a directory'), { code: 'EISDIR' }), 'file');
  try {
    accessSync(path, constants.R_OK);
  } catch (error) {
    throw refusal(role, path, error, 'file');
  }
}

/** Checks that `path` is a readable folder. */
export function checkReadableDirectory(path: string, role: FileRole): void {
  const stats = statOf(path, role, 'directory');
  if (!stats.isDirectory()) throw refusal(role, path, Object.assign(new Error('not a directory'), { code: 'ENOTDIR' }), 'directory');
  try {
    accessSync(path, constants.R_OK | constants.X_OK);
  } catch (error) {
    throw refusal(role, path, error, 'directory');
  }
}

/** Checks that `path` is a readable file or folder (an option that takes either). */
export function checkReadablePath(path: string, role: FileRole): void {
  if (statOf(path, role, 'file').isDirectory()) checkReadableDirectory(path, role);
  else checkReadableFile(path, role);
}

/** Reads a file named on the command line as text, each failure said as such. */
export function readFileArgument(path: string, role: FileRole): string {
  checkReadableFile(path, role);
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw refusal(role, path, error, 'file');
  }
}

/** Checks that a file may be written at `path`: its folder exists and is writable, and `path` is not a folder. */
export function checkWritableFile(path: string, role: FileRole): void {
  let existing: Stats | null = null;
  try {
    existing = statSync(path);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') throw refusal(role, path, error, 'file');
  }
  if (existing?.isDirectory()) throw refusal(role, path, Object.assign(new Error('is a directory'), { code: 'EISDIR' }), 'file');
  const folder = dirname(path);
  let folderStats: Stats;
  try {
    folderStats = statSync(folder);
  } catch (error) {
    throw new FileArgumentError((error as { code?: string }).code === 'ENOENT' ? 'CLI_FILE_NOT_FOUND' : 'CLI_FILE_UNUSABLE', role.option, path, `${role.option} ${path}: its folder ${folder} ${(error as { code?: string }).code === 'ENOENT' ? 'not found (ENOENT)' : `cannot be used: ${String(error)}`}`);
  }
  if (!folderStats.isDirectory()) throw new FileArgumentError('CLI_FILE_NOT_DIRECTORY', role.option, path, `${role.option} ${path}: ${folder} is not a directory (ENOTDIR)`);
  try {
    accessSync(existing ? path : folder, constants.W_OK);
  } catch {
    throw new FileArgumentError('CLI_FILE_NOT_WRITABLE', role.option, path, `${role.option} ${path}: ${role.what} not writable: permission denied (EACCES)`);
  }
}

/**
 * What an option names on the disk: a file or folder that must be there and readable, either of them, a file the
 * command writes, or one it creates when absent (then only what is there is checked).
 */
export type FileOptionKind = 'file' | 'directory' | 'file-or-directory' | 'writable-file' | 'file-if-present' | 'directory-if-present';

export interface FileOption {
  kind: FileOptionKind;
  /** Its name in messages: `scenario file`, `captures folder`, ... */
  what: string;
}

function checkOne(path: string, role: FileRole, kind: FileOptionKind): void {
  switch (kind) {
    case 'file':
      return checkReadableFile(path, role);
    case 'directory':
      return checkReadableDirectory(path, role);
    case 'file-or-directory':
      return checkReadablePath(path, role);
    case 'writable-file':
      return checkWritableFile(path, role);
    case 'file-if-present': {
      let present = true;
      try {
        statSync(path);
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOENT') throw refusal(role, path, error, 'file');
        present = false;
      }
      return present ? checkReadableFile(path, role) : undefined;
    }
    case 'directory-if-present': {
      let stats: Stats | null = null;
      try {
        stats = statSync(path);
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOENT') throw refusal(role, path, error, 'directory');
      }
      return stats ? checkReadableDirectory(path, role) : undefined;
    }
    default: {
      const unknown: never = kind;
      throw new Error(`unknown file option kind ${String(unknown)}`);
    }
  }
}

/** Checks every file-taking option that was given (`files` names them); the first that cannot be used is thrown. */
export function checkFileOptions(values: Readonly<Record<string, unknown>>, files: Readonly<Record<string, FileOption>>): void {
  for (const [name, option] of Object.entries(files)) {
    const given = values[name];
    const paths = Array.isArray(given) ? given : given === undefined ? [] : [given];
    for (const path of paths) if (typeof path === 'string') checkOne(path, { option: `--${name}`, what: option.what }, option.kind);
  }
}
