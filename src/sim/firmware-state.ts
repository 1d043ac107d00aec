/**
 * The part of a simulated fleet that must outlive the simulator's process: each BMC's installed firmware (its own
 * and its inventory members'), its update tasks (running, staged or ended and still readable) and its id counter.
 * A demo restarted mid-rollout then finds the BMCs where the rollout left them: an updated node still reports the
 * new version, a task still running ends when it would have, a finished task is still readable until it is purged.
 *
 * Everything else (sessions, faults, counters) starts afresh, as on a BMC whose management network was cut and
 * restored. Times are simulated milliseconds since the epoch, so a wall-clock simulator (the demo's) resumes a task
 * where the clock now stands: one that would have ended while the demo was down has ended. (A clock faster than the
 * wall clock saved times ahead of the next simulator's clock: its tasks resume where they stood, or earlier.)
 */
import { z } from 'zod';
import { describeIssues, SimError } from './errors.ts';
import { scheduleTask, TASK_RETENTION_MS, type UpdateContext } from './firmware-updates.ts';
import type { SimBmc, UpdateTask } from './sim-bmc.ts';

const taskSchema = z.object({
  id: z.string().min(1).max(100),
  imageUri: z.string().max(2000),
  targetPath: z.string().max(2000).optional(),
  version: z.string().max(200),
  startedAt: z.number(),
  durationMs: z.number().min(0),
  willFail: z.boolean(),
  finished: z.boolean(),
  fate: z.enum(['ok', 'fail', 'critical', 'reset-mid-update', 'lost-after-running']),
  status: z.enum(['OK', 'Critical']),
  endedAt: z.number().optional(),
  awaitingActivation: z.boolean(),
  purgeEarly: z.boolean(),
  onReset: z.boolean(),
});

export const simFirmwareStateSchema = z.object({
  format: z.literal('fleet-ledger-sim-firmware/1'),
  bmcs: z.array(
    z.object({
      id: z.string().min(1).max(200),
      fixture: z.string().max(500),
      firmware: z.string().max(200),
      inventoryVersions: z.array(z.tuple([z.string().max(2000), z.string().max(200)])),
      nextId: z.number().int().min(1),
      tasks: z.array(taskSchema),
      activeTaskId: z.string().optional(),
      /** The BMC's password, when it was changed (a rotation's change outlives the simulator's process, as on hardware). */
      password: z.string().min(1).max(200).optional(),
    }),
  ),
});

export type SimFirmwareState = z.output<typeof simFirmwareStateSchema>;

/** The fleet's firmware state now. */
export function captureFirmwareState(bmcs: readonly SimBmc[]): SimFirmwareState {
  return {
    format: 'fleet-ledger-sim-firmware/1',
    bmcs: bmcs.map((bmc) => ({
      id: bmc.id,
      fixture: bmc.capture.name,
      firmware: bmc.firmware,
      inventoryVersions: [...(bmc.inventoryVersions ?? new Map<string, string>())],
      nextId: bmc.nextId,
      tasks: [...(bmc.tasks?.values() ?? [])].map((task) => ({ ...task, targetPath: task.targetPath })),
      ...(bmc.activeUpdate ? { activeTaskId: bmc.activeUpdate.id } : {}),
      ...(bmc.counters.passwordChanges > 0 || bmc.passwordRestored ? { password: bmc.password } : {}),
    })),
  };
}

/**
 * Puts a saved state back on the BMCs of the same id and fixture (others keep their generated state), and
 * reschedules what the tasks were waiting for. Returns how many BMCs took their saved state. A file that is not a
 * saved state is refused with `SIM_STATE_INVALID` naming what is wrong, and nothing is changed.
 */
export function restoreFirmwareState(context: UpdateContext, byId: ReadonlyMap<string, SimBmc>, input: unknown): number {
  const parsed = simFirmwareStateSchema.safeParse(input);
  if (!parsed.success) throw new SimError('SIM_STATE_INVALID', `saved simulator state is invalid: ${describeIssues(parsed.error.issues)}`);
  const { clock } = context;
  let restored = 0;
  for (const saved of parsed.data.bmcs) {
    const bmc = byId.get(saved.id);
    if (!bmc || bmc.capture.name !== saved.fixture) continue;
    restored++;
    bmc.firmware = saved.firmware;
    if (saved.password !== undefined) {
      bmc.password = saved.password;
      bmc.passwordRestored = true;
    }
    bmc.inventoryVersions = saved.inventoryVersions.length ? new Map(saved.inventoryVersions) : undefined;
    bmc.nextId = Math.max(bmc.nextId, saved.nextId);
    bmc.tasks = new Map();
    bmc.activeUpdate = undefined;
    for (const fields of saved.tasks) {
      const task: UpdateTask = { ...fields, targetPath: fields.targetPath };
      bmc.tasks.set(task.id, task);
      if (!task.finished) {
        bmc.activeUpdate = task;
        context.inFlight.add(bmc);
        scheduleTask(context, bmc, task);
        continue;
      }
      if (task.awaitingActivation) {
        bmc.activeUpdate = task;
        context.inFlight.add(bmc);
        continue;
      }
      // The BMC's own image that ended OK was activating (the controller resetting itself) when the state was
      // saved: the restart stands for that reset.
      if (task.fate === 'ok' && task.status === 'OK' && task.targetPath === undefined && !task.onReset) bmc.firmware = task.version;
      const purgeAt = (task.endedAt ?? task.startedAt) + (task.purgeEarly ? 0 : TASK_RETENTION_MS);
      clock.schedule(Math.max(0, purgeAt - clock.now()), () => bmc.tasks?.delete(task.id));
    }
  }
  context.stats.inFlight = context.inFlight.size;
  context.stats.maxInFlight = Math.max(context.stats.maxInFlight, context.stats.inFlight);
  return restored;
}
