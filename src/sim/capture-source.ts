/**
 * Where a simulated BMC's Redfish tree comes from: a vendor profile of ours (the default: the tree is generated,
 * nothing is read from outside the repository), or a real Mockup-Creator capture an operator points at (a path,
 * or a name inside `--captures DIR`), so thousands of copies of their own BMC model can be simulated from one
 * capture taken with DMTF's Redfish-Mockup-Creator.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildCapture, loadCapture, type Capture } from './capture.ts';
import { SimError } from './errors.ts';
import { generateTree } from './generate-tree.ts';
import { bmcProfileByName, bmcProfiles, type BmcProfile } from './profiles/index.ts';

export interface CaptureOrigin {
  capture: Capture;
  /** The profile the tree was generated from; for a real capture, the profile of the same name if there is one. */
  profile: BmcProfile | undefined;
}

/** True when `dir` is a Mockup-Creator folder (holds `redfish/v1/index.json`). */
export function isMockupFolder(dir: string): boolean {
  return existsSync(join(dir, 'redfish', 'v1', 'index.json'));
}

/**
 * The Mockup-Creator folders a `--captures DIR` names: DIR itself when it is one, else its sub-folders that are
 * (also under `DIR/redfish/`, the layout of a folder of captures kept by vendor family), sorted by name.
 */
export function mockupFoldersIn(dir: string): Array<{ name: string; dir: string }> {
  const root = resolve(dir);
  if (isMockupFolder(root)) return [{ name: root.split(/[\\/]/).pop() ?? 'capture', dir: root }];
  const found: Array<{ name: string; dir: string }> = [];
  for (const parent of [root, join(root, 'redfish')]) {
    if (!existsSync(parent) || !statSync(parent).isDirectory()) continue;
    for (const entry of readdirSync(parent, { withFileTypes: true })) {
      if (entry.isDirectory() && isMockupFolder(join(parent, entry.name))) found.push({ name: entry.name, dir: join(parent, entry.name) });
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** The names of the built-in profiles a fleet that names none is made of, in fleet-mix order. */
export function profileNames(): string[] {
  return bmcProfiles.filter((profile) => profile.inDefaultFleet !== false).map((profile) => profile.name);
}

/** Builds the capture tree of a profile: generated once, shared by every BMC built from it. */
export function captureOfProfile(profile: BmcProfile): Capture {
  return buildCapture({ name: profile.name, dir: `profile:${profile.name}`, tree: generateTree(profile), latency: { ...profile.latency, slowestPath: profile.latency.slowestPath } });
}

/**
 * Resolves a fleet-mix entry: a path (`./mockups/r760`, `/data/x`) is a capture folder; with `capturesDir`, a name
 * is a folder inside it; otherwise a name is a built-in profile. Throws SIM_SCENARIO_INVALID for an unknown name
 * and SIM_MOCKUP_INVALID for a folder that is not a capture.
 */
export function resolveCaptureOrigin(nameOrPath: string, capturesDir?: string): CaptureOrigin {
  const isPath = nameOrPath.includes('/') || nameOrPath.includes('\\') || nameOrPath.startsWith('.');
  if (isPath) return { capture: loadCapture(resolve(nameOrPath)), profile: undefined };
  if (capturesDir) {
    const match = mockupFoldersIn(capturesDir).find((folder) => folder.name === nameOrPath);
    if (!match) {
      throw new SimError('SIM_MOCKUP_INVALID', `no Mockup-Creator folder named ${nameOrPath} in ${capturesDir} (need ${nameOrPath}/redfish/v1/index.json)`, {
        capturesDir,
        name: nameOrPath,
      });
    }
    return { capture: loadCapture(match.dir, nameOrPath), profile: bmcProfileByName(nameOrPath) };
  }
  const profile = bmcProfileByName(nameOrPath);
  if (!profile) {
    throw new SimError(
      'SIM_SCENARIO_INVALID',
      `unknown vendor profile ${nameOrPath}: use one of ${bmcProfiles.map((known) => known.name).join(', ')}, a path to a Mockup-Creator folder, or --captures DIR`,
      { field: 'fleet.mix.fixture', value: nameOrPath },
    );
  }
  return { capture: captureOfProfile(profile), profile };
}
