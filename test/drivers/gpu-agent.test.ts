import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { GpuTelemetryObserved, GpuXidObserved } from '../../events/driver-observations.js';
import { collectGpuObservations, DriverError, gpuQueryFields } from '../../src/drivers/index.js';
import { canonicalFieldName } from '../../src/drivers/gpu/nvidia-smi-csv.js';
import { run as runAgent } from '../../src/cli/commands/agent.js';
import { captureSection, fixturePath, readFixture, fixtures } from './support/fixtures.js';

const capture = 'linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt';
let dir: string;
let fakeSmi: string;
let oldSmi: string;
let noGpuSmi: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-agent-'));
  const text = readFixture('gpu', 'nvidia-smi', capture);
  const command = text.split('\n').find((line) => line.startsWith('# $ nvidia-smi --query-gpu=timestamp'))!.slice(4);
  // nvidia-smi answers the columns it is asked for, in that order: the captured CSV (every field) cut to the agent's.
  const [header = '', ...rows] = captureSection(text, command, 0).split('\n').filter((line) => line.trim());
  const columns = header.split(',').map((cell) => canonicalFieldName(cell));
  const picked = gpuQueryFields.map((field) => columns.indexOf(field));
  const project = (line: string) => picked.map((index) => line.split(',')[index]!.trim()).join(', ');
  const queried = [project(header), ...rows.map(project)].join('\n');
  const csv = join(dir, 'query.csv');
  await writeFile(csv, `${queried}\n`);
  const legacyCsv = join(dir, 'legacy.csv');
  await writeFile(legacyCsv, `${queried.replaceAll('clocks_event_reasons', 'clocks_throttle_reasons')}\n`);
  const script = async (name: string, body: string): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, `#!/bin/sh\n${body}\n`);
    await chmod(path, 0o755);
    return path;
  };
  // A stand-in for nvidia-smi that prints the captured CSV of a real H100.
  fakeSmi = await script('nvidia-smi', `cat '${csv}'`);
  // A pre-535 driver: rejects clocks_event_reasons the way nvidia-smi does, accepts clocks_throttle_reasons.
  oldSmi = await script(
    'nvidia-smi-old',
    `case "$*" in *clocks_event_reasons*) echo 'Field "clocks_event_reasons.gpu_idle" is not a valid field to query.' >&2; exit 2;; esac\ncat '${legacyCsv}'`,
  );
  noGpuSmi = await script('nvidia-smi-nogpu', "echo 'No devices were found'; exit 6");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!fixtures.runnable)(fixtures.title('GPU agent collection'), () => {
  it('turns nvidia-smi output and the kernel log into valid GPU telemetry and XID observations', async () => {
    const result = await collectGpuObservations({ nvidiaSmi: fakeSmi, kernelLogFile: fixturePath('gpu', 'kmsg', 'dmesg-with-xid-119.log') });
    expect(result.observations.map((o) => o.type)).toEqual(['GpuTelemetryObserved', 'GpuXidObserved']);
    expect(GpuTelemetryObserved.schema.safeParse(result.observations[0]!.data).success).toBe(true);
    expect(GpuXidObserved.schema.safeParse(result.observations[1]!.data).success).toBe(true);
    expect(result.observations[1]!.type === 'GpuXidObserved' && result.observations[1]!.data.events).toHaveLength(5);
  });

  it('falls back to clocks_throttle_reasons on drivers that predate clocks_event_reasons', async () => {
    const result = await collectGpuObservations({ nvidiaSmi: oldSmi, kernelLogFile: fixturePath('gpu', 'kmsg', 'kmsg.1.log') });
    const telemetry = result.observations[0]!;
    expect(telemetry.type === 'GpuTelemetryObserved' && telemetry.data.gpus[0]!.throttleReasons).toEqual(['gpu_idle']);
    expect(result.notes.join(' ')).toMatch(/clocks_throttle_reasons/);
  });

  it('a machine without nvidia-smi is DRIVER_TOOL_MISSING with a clear message', async () => {
    const error = (await collectGpuObservations({ nvidiaSmi: join(dir, 'absent-nvidia-smi') }).catch((e: unknown) => e)) as DriverError;
    expect(error.code).toBe('DRIVER_TOOL_MISSING');
    expect(error.message).toMatch(/no NVIDIA driver/);
  });

  it('a machine whose driver sees no GPU is DRIVER_NO_DEVICE', async () => {
    await expect(collectGpuObservations({ nvidiaSmi: noGpuSmi })).rejects.toMatchObject({ code: 'DRIVER_NO_DEVICE', retryable: false });
  });
});

describe.skipIf(!fixtures.runnable)(fixtures.title('fleet-ledger agent'), () => {
  it('POSTs the observations as JSON to <url>/v1/observations with the bearer token', async () => {
    const received: Array<{ url: string | undefined; method: string | undefined; headers: IncomingHttpHeaders; body: string }> = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ url: request.url, method: request.method, headers: request.headers, body });
        response.writeHead(202, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const { port } = server.address() as AddressInfo;
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const code = await runAgent(['--url', `http://127.0.0.1:${port}/ledger`, '--token', 't0ken', '--node', 'gpu-node-7', '--nvidia-smi', fakeSmi, '--kernel-log', fixturePath('gpu', 'kmsg', 'dmesg-with-xid-119.log')]);
      expect(code).toBe(0);
    } finally {
      stderr.mockRestore();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ url: '/ledger/v1/observations', method: 'POST' });
    expect(received[0]!.headers.authorization).toBe('Bearer t0ken');
    const body = JSON.parse(received[0]!.body) as { nodeId: string; observations: Array<{ type: string; data: unknown }> };
    expect(body.nodeId).toBe('gpu-node-7');
    expect(body.observations.map((o) => o.type)).toEqual(['GpuTelemetryObserved', 'GpuXidObserved']);
  });

  it('on a machine without a GPU it says so and exits non-zero', async () => {
    const messages: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (messages.push(String(chunk)), true));
    try {
      expect(await runAgent(['--nvidia-smi', join(dir, 'absent-nvidia-smi')])).toBe(3);
      expect(await runAgent(['--nvidia-smi', noGpuSmi])).toBe(3);
    } finally {
      stderr.mockRestore();
    }
    expect(messages.join('')).toMatch(/no GPU to report on this machine/);
  });
});
