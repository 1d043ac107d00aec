/**
 * The demo's simulated BMCs keep their firmware across restarts of `fleet-ledger start`: each BMC's installed
 * versions and update tasks are saved in the data folder (`simulator-state.json`, written whole and renamed into
 * place, so a kill leaves the previous copy) every few seconds while they change and once more on stop, and given
 * back to the next simulator before anything polls it. A rollout in flight then finds its tasks, and a node counted
 * updated still reports the new version.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Simulator } from '../sim/index.js';

export const simulatorStateFileName = 'simulator-state.json';

export interface SimulatorStateKeeper {
  /** BMCs that took their saved state at start. */
  restored: number;
  /** Saves once more and stops saving. */
  stop(): void;
}

export function keepSimulatorState(
  sim: Pick<Simulator, 'firmwareState' | 'restoreFirmwareState'>,
  folder: string,
  log: (message: string, fields?: Record<string, unknown>) => void,
  everyMs = 5_000,
): SimulatorStateKeeper {
  const file = join(folder, simulatorStateFileName);
  let restored = 0;
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') log('simulator state not read: the simulated BMCs start from their profiles', { file: simulatorStateFileName, error: String(error) });
  }
  if (text !== undefined) {
    try {
      restored = sim.restoreFirmwareState(JSON.parse(text));
    } catch (error) {
      // A damaged file costs the simulated firmware state, never the start.
      log('simulator state not restored: the simulated BMCs start from their profiles', { file: simulatorStateFileName, error: error instanceof Error ? error.message : String(error) });
    }
  }
  let last = '';
  const save = (): void => {
    const next = JSON.stringify(sim.firmwareState());
    if (next === last) return;
    try {
      mkdirSync(folder, { recursive: true });
      writeFileSync(`${file}.tmp`, next);
      renameSync(`${file}.tmp`, file);
      last = next;
    } catch (error) {
      log('simulator state not saved', { file: simulatorStateFileName, error: String(error) });
    }
  };
  save();
  const timer = setInterval(save, everyMs);
  timer.unref();
  return {
    restored,
    stop: () => {
      clearInterval(timer);
      save();
    },
  };
}
