/**
 * A vendor profile's generated tree written out as a Mockup-Creator folder (`redfish/v1/.../index.json`), for
 * tests that serve a tree through the drivers' mockup server and need no real capture. One folder per profile
 * and test process, removed when the process exits.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bmcProfileByName, generateTree, type RedfishTree } from '../../src/sim/index.js';

const written = new Map<string, string>();
let root: string | undefined;

/** Writes `tree` under `dir` in the Mockup-Creator layout (a stored page `X?$skip=N` becomes the folder `X?$skip=N`). */
export function writeMockupFolder(tree: RedfishTree, dir: string): void {
  for (const [path, body] of tree) {
    const folder = join(dir, ...path.split('/').filter(Boolean));
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'index.json'), JSON.stringify(body));
  }
}

/** The Mockup-Creator folder of profile `name` (`dell`, `hpe`, ...). */
export function profileMockup(name: string): string {
  const existing = written.get(name);
  if (existing) return existing;
  const profile = bmcProfileByName(name);
  if (!profile) throw new Error(`no vendor profile named ${name}`);
  if (!root) {
    root = mkdtempSync(join(tmpdir(), 'fleet-ledger-profiles-'));
    const dir = root;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  const dir = join(root, name);
  writeMockupFolder(generateTree(profile), dir);
  written.set(name, dir);
  return dir;
}
