/**
 * The rule for tests that need a program of the machine (ipmi_sim, snmpd, chromium, promtool, openssl): when it is
 * missing they are skipped off CI, with the reason and the command that installs it in their title; on CI
 * (`CI=true`, where `.ci/run` installs them) they run and fail saying which program is missing. The check looks the
 * program up on PATH without running it, so a missing program never surfaces as an unhandled spawn error.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

export interface ToolRequirement {
  /** Every program was found. */
  available: boolean;
  /** False only off CI with a program missing: the dependent tests are skipped. */
  runnable: boolean;
  /** The reason the tests are skipped (or, on CI, fail), or undefined when every program is there. */
  reason: string | undefined;
  /** `name`, with the skip reason appended when a program is missing. */
  title(name: string): string;
  /** Throws with the reason when a program is missing (on CI this is the failure). */
  require(): void;
}

/** Where `command` is found on PATH (or as given, when it is a path), else undefined. */
export function findProgram(command: string, path = process.env.PATH ?? ''): string | undefined {
  const candidates = isAbsolute(command) ? [command] : path.split(delimiter).filter(Boolean).map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The programs a group of tests needs, and the Debian package install that provides them. */
export function systemTools(commands: string[], install: string, env: NodeJS.ProcessEnv = process.env): ToolRequirement {
  const missing = commands.filter((command) => findProgram(command, env.PATH ?? '') === undefined);
  const reason = missing.length === 0 ? undefined : `${missing.join(' and ')} not found (${install})`;
  return {
    available: reason === undefined,
    runnable: reason === undefined || env.CI === 'true',
    reason,
    title: (name) => (reason ? `${name} (skipped: ${reason})` : name),
    require: () => {
      if (reason) throw new Error(`${reason}; CI installs it through .ci/run`);
    },
  };
}
