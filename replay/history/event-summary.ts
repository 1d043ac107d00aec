/**
 * One line an operator reads for each event, in the fleet's words. Intents read as what was asked ("cordon n1
 * 'PSU swap'"), observations as what was seen, saga steps as what happened to the machine. Every type of the
 * catalogue has its line: the table is typed over every event definition, so a new type does not compile until it
 * has one. Pure.
 */
import {
  driverObservationEvents,
  livenessEvents,
  operatorIntentEvents,
  pollOutcomeEvents,
  sagaProgressEvents,
  type EventData,
  type RecordedEvent,
} from '../../events/index.js';

const fleetEvents = [...driverObservationEvents, ...pollOutcomeEvents, ...operatorIntentEvents, ...livenessEvents, ...sagaProgressEvents] as const;
type FleetEvent = (typeof fleetEvents)[number];
type Summaries = { [E in FleetEvent as E['type']]: (data: EventData<E>, event: RecordedEvent) => string };

const maxLength = 300;

/** `'reason'`, shortened. */
function quoted(text: string | undefined | null, max = 120): string {
  if (!text) return '';
  const clean = text.replace(/\s+/g, ' ').trim();
  return ` '${clean.length > max ? `${clean.slice(0, max - 1)}…` : clean}'`;
}

/** An instant as people read it in a line: `2026-03-01 03:00:05Z`. */
export function shortInstant(value: string | number | Date): string {
  return new Date(value).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

function list(items: readonly string[], max = 4): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

function joined(...parts: Array<string | null | undefined | false>): string {
  return parts.filter(Boolean).join(' ');
}

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}

const summaries: Summaries = {
  // ---- operator intents ----
  NodeRegistered: (d) => `register ${d.nodeId} in ${d.site}/${d.rack} (BMC ${d.bmc.protocol} ${d.bmc.address}, every ${d.expectedIntervalS} s)`,
  NodeDecommissioned: (d) => `decommission ${d.nodeId}${quoted(d.reason)}`,
  MaintenanceWindowSet: (d) => `maintenance ${d.nodeId} ${shortInstant(d.from)} → ${shortInstant(d.until)}${quoted(d.reason)}`,
  NodeCordoned: (d) => `cordon ${d.nodeId}${quoted(d.reason)}`,
  NodeUncordoned: (d) => `uncordon ${d.nodeId}${quoted(d.reason)}`,
  NodeQuarantined: (d) => `quarantine ${d.nodeId}${quoted(d.reason)}`,
  NodeReleased: (d) => `release ${d.nodeId} from quarantine${quoted(d.reason)}`,
  LockoutLatchCleared: (d) => `clear the login latch of ${d.nodeId}${quoted(d.reason)}`,
  AlarmAcknowledged: (d) => `acknowledge alarm ${d.alarmId}${quoted(d.note)}`,
  NodeDeclared: (d) => {
    const row = d.declaration;
    const baseline = Object.entries(row.firmwareBaseline ?? {}).map(([component, version]) => `${component} ${version}`);
    return joined(`declare ${row.nodeId} (EBOM ${d.importId}): ${row.manufacturer} ${row.model} serial ${row.serial}`, row.gpuCount !== undefined && `, ${row.gpuCount} GPUs`, baseline.length > 0 && `, baseline ${list(baseline)}`).replace(' ,', ',');
  },
  EbomImported: (d) => `import EBOM ${d.importId} from ${d.source}: ${d.rows} rows`,
  TopologyDeclared: (d) => `declare rack ${d.site}/${d.rack}: PDU ${d.pdu.join(', ') || '-'}, ToR ${d.tor.join(', ') || '-'}${d.cdu ? `, CDU ${d.cdu}` : ''}`,
  // ---- driver observations ----
  NodeInventoryObserved: (d) =>
    joined(
      'inventory:',
      [d.system.manufacturer, d.system.model].filter(Boolean).join(' ') || 'unknown system',
      d.system.serialNumber && `serial ${d.system.serialNumber}`,
      (d.bmc.model || d.bmc.firmwareVersion) && `, BMC ${[d.bmc.model, d.bmc.firmwareVersion].filter(Boolean).join(' ')}`,
      (d.biosVersion ?? d.system.biosVersion) && `, BIOS ${d.biosVersion ?? d.system.biosVersion}`,
      d.gpus && `, ${d.gpus.count} GPUs`,
    ).replace(/ ,/g, ','),
  FirmwareInventoryObserved: (d) => `firmware: ${list(d.components.filter((c) => !c.slot || c.slot === 'current' || c.slot === 'installed').map((c) => `${c.component} ${c.version}`), 6) || 'no components'}`,
  PowerStateObserved: (d) => `power ${d.powerState}`,
  HealthObserved: (d) => `health ${d.health}${d.conditions.length > 0 ? `: ${list(d.conditions.map((c) => c.message ?? c.messageId ?? c.origin), 2)}` : ''}`,
  SensorsObserved: (d) => {
    const inlet = d.temperatures.find((t) => /inlet|ambient/i.test(t.name)) ?? d.temperatures[0];
    const failing = [...d.temperatures, ...d.fans].filter((s) => s.health && s.health !== 'OK').map((s) => `${s.name} ${s.health}`);
    return joined('sensors:', inlet && inlet.reading !== null && `${inlet.name} ${inlet.reading} ${inlet.unit}`, d.powerConsumedWatts != null && `, ${d.powerConsumedWatts} W`, failing.length > 0 && `, ${list(failing, 3)}`).replace(/ ,/g, ',').replace(/: ,/, ':');
  },
  GpuTelemetryObserved: (d) => {
    const uncorrected = d.gpus.reduce((sum, gpu) => sum + (gpu.ecc.uncorrectedVolatile ?? 0), 0);
    const throttled = d.gpus.filter((gpu) => gpu.throttleReasons.length > 0).length;
    return `GPU telemetry: ${d.gpus.length} GPUs, ${uncorrected} uncorrected ECC errors${throttled > 0 ? `, ${throttled} throttled` : ''}`;
  },
  GpuXidObserved: (d) => `GPU XID: ${list(d.events.map((x) => `${x.xid} ${x.meaning} (${x.severity}, ${x.pciBusId})`), 2)}`,
  NetworkDeviceObserved: (d) => `network device ${d.sysName ?? d.sysDescr ?? ''}: ${d.interfaces.filter((i) => i.operStatus === 'up').length}/${d.interfaces.length} ports up, ${d.outlets.filter((o) => o.state === 'on').length}/${d.outlets.length} outlets on`,
  SelEntriesObserved: (d) => `SEL: ${d.entries.length} new ${d.entries.length === 1 ? 'entry' : 'entries'}${d.entries.length > 0 ? `: ${list(d.entries.map((e) => `${e.severity ?? ''} ${e.message ?? e.messageId ?? e.id}`.trim()), 2)}` : ''}`,
  // ---- poll outcomes ----
  PollOutcomesRecorded: (d) => {
    const nodes = new Set(d.nodeIds);
    if (nodes.size === 1) {
      return `poll ${d.work.map((work, i) => `${work}: ${d.outcomes[i]} (${ms(d.latencyMs[i] ?? 0)})`).join('; ')}`;
    }
    const answered = d.outcomes.filter((o) => o === 'success' || o === 'not-modified').length;
    return `polls ${d.site}: ${d.outcomes.length} outcomes, ${answered} answered`;
  },
  // ---- liveness transitions ----
  NodeWentDark: (d) => `went dark after ${d.consecutiveMisses} misses (last contact ${d.lastContactAt ? shortInstant(d.lastContactAt) : 'never'})`,
  NodeRecovered: (d) => `recovered after ${d.consecutiveSuccesses} contacts`,
  LockoutLatched: (d) => `BMC logins latched off (${d.cause})`,
  // ---- rollouts ----
  RolloutPlanned: (d) => `plan rollout ${d.rolloutId}: ${d.plan.firmware.component} → ${d.plan.firmware.version} on ${d.plan.targets.length} nodes in ${d.plan.waves.length} waves`,
  RolloutApproved: (d) => `approve rollout ${d.rolloutId}${quoted(d.reason)}`,
  RolloutStarted: (d) => `rollout ${d.rolloutId} started`,
  WaveOpened: (d) => `rollout ${d.rolloutId}: wave ${d.wave} opened (${d.nodes} nodes)`,
  NodeDispatched: (d) => `rollout ${d.rolloutId}: ${d.nodeId} dispatched in wave ${d.wave}`,
  NodeOutcomeRecorded: (d) => `rollout ${d.rolloutId}: ${d.nodeId} ${d.outcome}${d.detail ? ` (${d.detail.slice(0, 120)})` : ''}`,
  GateEvaluated: (d) => `rollout ${d.rolloutId}: gate after wave ${d.wave} ${d.verdict} (${d.values.healthy}/${d.values.nodes} healthy, ${d.values.openAlarms} open alarms)`,
  WaveAdvanced: (d) => `rollout ${d.rolloutId}: wave ${d.from} → ${d.to} (by ${d.by})`,
  RolloutPaused: (d) => `pause rollout ${d.rolloutId} (${d.reason})${quoted(d.detail)}`,
  RolloutHalted: (d) => `rollout ${d.rolloutId} halted: ${d.reason}${quoted(d.detail)}`,
  RolloutResumed: (d) => `resume rollout ${d.rolloutId}${quoted(d.reason)}`,
  RolloutAborted: (d) => `abort rollout ${d.rolloutId}${quoted(d.reason)}`,
  RolloutCapTightened: (d) => `tighten rollout ${d.rolloutId} to ${d.cap} slots (was ${d.previous})${quoted(d.reason)}`,
  NodeVerbApplied: (d) => `${d.verb} ${d.nodeId} in rollout ${d.rolloutId}${quoted(d.reason)}`,
  RolloutCompleted: (d) => `rollout ${d.rolloutId} completed: ${d.updated} updated, ${d.alreadyAtTarget} already at target, ${d.failed} failed, ${d.quarantined} quarantined, ${d.skipped} skipped`,
  // ---- one node's firmware step ----
  StepStarted: (d) => `firmware step started (${d.rolloutId}): ${d.component} → ${d.targetVersion}`,
  UpdateIntentRecorded: (d) => `about to ask for the update, attempt ${d.attempt} (${d.method}, ${d.applyTime})`,
  UpdateSubmitted: (d) => `BMC accepted the update (HTTP ${d.httpStatus}${d.adopted ? ', adopted task' : ''})`,
  UpdateSubmissionFailed: (d) => `update refused: ${d.code}${d.status ? ` (HTTP ${d.status})` : ''}${d.outcomeKnown ? '' : ', outcome unknown'}`,
  BmcTaskObserved: (d) => `update task ${d.taskState}/${d.taskStatus}${d.percent !== undefined ? ` ${d.percent}%` : ''}`,
  BmcTaskVanished: () => 'update task vanished from the BMC',
  ActivationRequested: (d) => `activation requested (${d.resetType})`,
  VersionObserved: (d) => `version read: ${d.version ?? 'none'}${d.matches ? ' (target)' : ''}`,
  VersionVerified: (d) => `version ${d.version} verified (${d.reads} reads)`,
  ReconcileProbed: (d) => `reconcile probe: ${d.verdict}${d.reachable ? '' : ' (BMC unreachable)'}`,
  RetryScheduled: (d) => `retry scheduled, attempt ${d.attempt}: ${d.cause.slice(0, 120)}`,
  StepHeld: (d) => `firmware step held (${d.hold}): ${d.reason.slice(0, 160)}`,
  StepSucceeded: (d) => `firmware step succeeded: ${d.outcome} ${d.version}`,
  StepFailed: (d) => `firmware step failed: ${d.cause.slice(0, 160)}`,
  StepQuarantined: (d) => `firmware step quarantined: ${d.evidence.slice(0, 160)}`,
  StepOperatorAction: (d) => `${d.verb} firmware step${quoted(d.reason)}`,
  // ---- capacity ----
  SiteCapSet: (d) => `set site ${d.site} disruption cap to ${d.cap}${quoted(d.reason)}`,
  SlotAcquired: (d) => `slot ${d.slotId} taken for ${d.nodeId} by ${d.sagaId}`,
  SlotReleased: (d) => `slot ${d.slotId} of ${d.nodeId} released (${d.why.slice(0, 80)})`,
  // ---- provisioning ----
  ProvisioningStarted: (d) => `provision ${d.nodeId} in ${d.site}/${d.rack}${d.baseline.length > 0 ? `, baseline ${list(d.baseline.map((b) => `${b.component} ${b.version}`))}` : ''}`,
  BmcAccessVerified: () => 'provisioning: BMC access verified',
  BmcAccessFailed: (d) => `provisioning: BMC access failed (${d.code})`,
  InventoryCollected: (d) => `provisioning: inventory collected (${[d.observed.manufacturer, d.observed.model].filter(Boolean).join(' ') || 'unknown'})`,
  BomValidated: () => 'provisioning: bill of materials validated',
  BomMismatchDetected: (d) => `provisioning: bill of materials mismatch: ${list(d.differences.map((x) => `${x.field} declared ${x.declared}, observed ${x.observed}`), 2)}`,
  BaselineComponentSettled: (d) => `provisioning: ${d.component} ${d.outcome}${d.detail ? ` (${d.detail.slice(0, 80)})` : ''}`,
  BurnInStarted: (d) => `provisioning: burn-in until ${shortInstant(d.until)}`,
  BurnInObserved: (d) => `provisioning: burn-in reading, ${d.reachable ? 'reachable' : 'unreachable'}${d.problems.length > 0 ? `: ${list(d.problems, 2)}` : ''}`,
  NodeReady: () => 'provisioning: ready',
  ProvisioningQuarantined: (d) => `provisioning quarantined at ${d.stage}: ${d.reason.slice(0, 160)}`,
  QuarantineReleased: (d) => `release ${d.nodeId} to provisioning at ${d.resumeAt}${quoted(d.reason)}`,
  ProvisioningAbandoned: (d) => `abandon provisioning of ${d.nodeId}${quoted(d.reason)}`,
};

/** The event's one line; an unknown type (a newer ledger's) shows its type and scalar fields. */
export function summarizeEvent(event: RecordedEvent): string {
  const summarize = (summaries as Record<string, ((data: any, event: RecordedEvent) => string) | undefined>)[event.type];
  let line: string;
  try {
    line = summarize ? summarize(event.data, event) : fallback(event);
  } catch {
    line = fallback(event);
  }
  return line.length > maxLength ? `${line.slice(0, maxLength - 1)}…` : line;
}

function fallback(event: RecordedEvent): string {
  const data = (event.data ?? {}) as Record<string, unknown>;
  const scalars = Object.entries(data)
    .filter(([, value]) => value !== null && ['string', 'number', 'boolean'].includes(typeof value))
    .slice(0, 5)
    .map(([key, value]) => `${key}=${String(value)}`);
  return scalars.length > 0 ? `${event.type}: ${scalars.join(' ')}` : event.type;
}
