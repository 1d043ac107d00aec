/**
 * The in-band GPU agent's collection step: runs `nvidia-smi --query-gpu ... --format=csv` (retrying with the
 * pre-535 `clocks_throttle_reasons` spelling when the driver rejects the new one) and reads the kernel log for
 * XID errors. A machine without `nvidia-smi` or without GPUs is a `DriverError` (`DRIVER_TOOL_MISSING`,
 * `DRIVER_NO_DEVICE`) with a message an operator can act on.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { DriverObservation } from '../../../events/index.js';
import { DriverError } from '../driver-error.js';
import { gpuQueryFields, parseNvidiaSmiCsv } from './nvidia-smi-csv.js';
import { parseXidLog } from './xid.js';

export interface GpuAgentOptions {
  /** The nvidia-smi binary. Default `nvidia-smi` on PATH. */
  nvidiaSmi?: string;
  /** Read XIDs from this file instead of running `dmesg`. */
  kernelLogFile?: string;
  timeoutMs?: number;
}

export interface GpuAgentResult {
  observations: DriverObservation[];
  /** Things the operator should know (kernel log unreadable, old field spelling used). */
  notes: string[];
}

function run(file: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) resolve({ stdout, stderr });
      else {
        const code = (error as NodeJS.ErrnoException).code;
        const details = { command: `${file} ${args.join(' ')}`.slice(0, 300), stderr: String(stderr || stdout).slice(0, 500), exitCode: typeof code === 'number' ? code : null };
        if (code === 'ENOENT') reject(new DriverError('DRIVER_TOOL_MISSING', `${file} is not installed`, details));
        else if (error.killed) reject(new DriverError('DRIVER_TIMEOUT', `${file} passed its ${timeoutMs} ms deadline`, { ...details, deadlineMs: timeoutMs }));
        else reject(new DriverError('DRIVER_COMMAND_FAILED', `${file} failed: ${String(stderr || stdout).trim().slice(0, 200)}`, details));
      }
    });
  });
}

export async function collectGpuObservations(options: GpuAgentOptions = {}): Promise<GpuAgentResult> {
  const nvidiaSmi = options.nvidiaSmi ?? 'nvidia-smi';
  const timeoutMs = options.timeoutMs ?? 30_000;
  const notes: string[] = [];
  const query = async (fields: readonly string[]): Promise<string> =>
    (await run(nvidiaSmi, [`--query-gpu=${fields.join(',')}`, '--format=csv'], timeoutMs)).stdout;
  let csv: string;
  let fields = gpuQueryFields;
  try {
    csv = await query(fields);
  } catch (error) {
    if (error instanceof DriverError && error.code === 'DRIVER_TOOL_MISSING') {
      throw new DriverError('DRIVER_TOOL_MISSING', 'nvidia-smi was not found: this machine has no NVIDIA driver installed (no GPU to report)', error.details);
    }
    if (error instanceof DriverError && error.code === 'DRIVER_COMMAND_FAILED' && /No devices were found|couldn't communicate with the NVIDIA driver/i.test(error.details.stderr ?? '')) {
      throw new DriverError('DRIVER_NO_DEVICE', `nvidia-smi found no GPU: ${error.details.stderr?.trim()}`, error.details);
    }
    if (error instanceof DriverError && error.code === 'DRIVER_COMMAND_FAILED' && /is not a valid field|Invalid combination/i.test(error.details.stderr ?? '')) {
      // Drivers before ~535 know only clocks_throttle_reasons.*
      fields = gpuQueryFields.map((field) => field.replace(/^clocks_event_reasons/, 'clocks_throttle_reasons'));
      csv = await query(fields);
      notes.push('driver predates clocks_event_reasons; used clocks_throttle_reasons');
    } else throw error;
  }
  const telemetry = parseNvidiaSmiCsv(csv, fields);
  if (telemetry.gpus.length === 0) throw new DriverError('DRIVER_NO_DEVICE', 'nvidia-smi reported no GPU on this machine');
  const observations: DriverObservation[] = [{ type: 'GpuTelemetryObserved', data: telemetry }];

  let kernelLog: string | undefined;
  try {
    kernelLog = options.kernelLogFile ? await readFile(options.kernelLogFile, 'utf8') : (await run('dmesg', ['-T'], timeoutMs)).stdout;
  } catch (error) {
    notes.push(`kernel log not read (${error instanceof Error ? error.message : String(error)}); XIDs not reported`);
  }
  if (kernelLog !== undefined) observations.push({ type: 'GpuXidObserved', data: parseXidLog(kernelLog) });
  return { observations, notes };
}
