/**
 * NVIDIA XID errors: a catalogue of the codes that matter in a fleet (meaning, severity, recommended action) and
 * a parser that finds XID lines in a kernel log in any of its usual shapes (`dmesg -T`, `dmesg`, `/dev/kmsg`
 * records, journald). The catalogue paraphrases NVIDIA's XID documentation; codes not in it are still reported,
 * with a generic meaning, and listed in `unrecognized`.
 */
import type { GpuXidObservedData, UnrecognizedValue, XidEvent } from '../../../events/index.js';
import { storableText } from '../storable-text.js';

export interface XidCatalogueEntry {
  meaning: string;
  severity: XidEvent['severity'];
  recommendedAction: string;
}

const RESET = 'Drain the node and reset the GPU (or reboot); if it recurs, run field diagnostics and RMA the GPU.';
const APP = 'Usually an application fault: check the job that ran on this GPU; recurring across jobs points at hardware.';

export const xidCatalogue: Readonly<Record<number, XidCatalogueEntry>> = {
  8: { meaning: 'GPU stopped processing (channel timeout)', severity: 'warning', recommendedAction: APP },
  13: { meaning: 'Graphics engine exception', severity: 'warning', recommendedAction: APP },
  31: { meaning: 'GPU memory page fault', severity: 'warning', recommendedAction: APP },
  32: { meaning: 'Invalid or corrupted push buffer stream', severity: 'warning', recommendedAction: APP },
  38: { meaning: 'Driver firmware error', severity: 'critical', recommendedAction: RESET },
  43: { meaning: 'GPU stopped processing (reset channel verification error)', severity: 'info', recommendedAction: APP },
  45: { meaning: 'Preemptive cleanup after earlier errors', severity: 'info', recommendedAction: 'Look at the XID that preceded it.' },
  48: { meaning: 'Double-bit ECC error (DBE)', severity: 'critical', recommendedAction: RESET },
  61: { meaning: 'Internal micro-controller breakpoint/warning', severity: 'warning', recommendedAction: 'Reset the GPU at the next drain; report to NVIDIA if it recurs.' },
  62: { meaning: 'Internal micro-controller halt', severity: 'critical', recommendedAction: RESET },
  63: { meaning: 'ECC page retirement or row-remapping event recorded', severity: 'warning', recommendedAction: 'Reset the GPU when convenient so the remap takes effect; watch remapped-row counts.' },
  64: { meaning: 'ECC page retirement or row-remapping recording failure', severity: 'critical', recommendedAction: RESET },
  69: { meaning: 'Graphics engine class error', severity: 'warning', recommendedAction: APP },
  74: { meaning: 'NVLink error', severity: 'critical', recommendedAction: 'Drain the node, check NVLink/NVSwitch health and fabric manager logs, then reset the GPUs.' },
  79: { meaning: 'GPU has fallen off the bus', severity: 'critical', recommendedAction: 'Drain the node; check power, PCIe/riser seating and thermals; reboot; RMA if it recurs.' },
  92: { meaning: 'High single-bit ECC error rate', severity: 'warning', recommendedAction: 'Watch ECC counters; schedule a GPU reset; RMA if the rate persists.' },
  94: { meaning: 'Contained ECC error', severity: 'warning', recommendedAction: 'Restart the affected application; reset the GPU at the next drain.' },
  95: { meaning: 'Uncontained ECC error', severity: 'critical', recommendedAction: RESET },
  109: { meaning: 'Context switch timeout', severity: 'warning', recommendedAction: APP },
  119: { meaning: 'GSP RPC timeout (the GPU System Processor did not answer the driver)', severity: 'critical', recommendedAction: RESET },
  120: { meaning: 'GSP error', severity: 'critical', recommendedAction: RESET },
  121: { meaning: 'C2C link corrected error', severity: 'warning', recommendedAction: 'Watch for recurrence; reset at the next drain.' },
  140: { meaning: 'Unrecovered ECC error', severity: 'critical', recommendedAction: RESET },
  154: { meaning: 'GPU recovery action changed (reset or reboot now required)', severity: 'critical', recommendedAction: 'Do what nvidia-smi reports as gpu_recovery_action (GPU reset or node reboot).' },
};

const UNKNOWN: XidCatalogueEntry = {
  meaning: 'XID code not in the catalogue',
  severity: 'warning',
  recommendedAction: "Look the code up in NVIDIA's XID documentation and add it to the catalogue.",
};

export function describeXid(xid: number): XidCatalogueEntry & { known: boolean } {
  const entry = xidCatalogue[xid];
  return entry ? { ...entry, known: true } : { ...UNKNOWN, known: false };
}

const XID_LINE = /NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d+),\s*(.*)$/;
const TIMESTAMP_PREFIXES: RegExp[] = [/^\[([^\]]+)\]/, /^\d+,\d+,(\d+),[^;]*;/, /^(\w{3}\s+\d+\s+[\d:]+)\s/, /^(\d{4}-\d{2}-\d{2}T[^\s]+)\s/];

/** Every XID line in a kernel log, in log order. Other lines are ignored (a kernel log is mostly other things). */
export function parseXidLog(raw: string): GpuXidObservedData {
  const text = storableText(raw);
  const events: XidEvent[] = [];
  const unrecognized: UnrecognizedValue[] = [];
  text.split(/\r?\n/).forEach((line, lineNumber) => {
    const match = XID_LINE.exec(line);
    if (!match) return;
    const xid = Number(match[2]);
    let message = match[3] ?? '';
    const { meaning, severity, recommendedAction } = describeXid(xid);
    const event: XidEvent = { xid, pciBusId: match[1]!, message: '', meaning, severity, recommendedAction };
    const process = /^pid=(\d+|'<unknown>'),\s*name=([^,]*),\s*(.*)$/.exec(message);
    if (process) {
      const pid = Number(process[1]);
      if (Number.isInteger(pid)) event.pid = pid;
      if (process[2] && process[2] !== "'<unknown>'") event.processName = process[2];
      message = process[3] ?? '';
    }
    event.message = message.slice(0, 1000);
    for (const prefix of TIMESTAMP_PREFIXES) {
      const stamp = prefix.exec(line);
      if (stamp?.[1]) {
        event.kernelTimestamp = stamp[1].trim();
        break;
      }
    }
    if (!xidCatalogue[xid]) unrecognized.push({ path: `kernel-log/line/${lineNumber + 1}`, value: line.slice(0, 500) });
    events.push(event);
  });
  return { source: 'agent', dialect: 'kernel-log', unrecognized, events };
}
