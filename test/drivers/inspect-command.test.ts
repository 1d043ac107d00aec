import { describe, expect, it, vi } from 'vitest';
import { run as runInspect, summary } from '../../src/cli/commands/inspect.js';
import { bmcProfileByName } from '../../src/sim/index.js';
import { profileMockup } from '../support/profile-mockup.js';

async function capture(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    return { code: await runInspect(argv), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('fleet-ledger inspect', () => {
  it('has a one-line summary', () => {
    expect(summary.length).toBeGreaterThan(10);
  });

  it('--mockup --json prints the normalized observation of a Mockup-Creator folder', async () => {
    const { code, stdout } = await capture(['--mockup', profileMockup('supermicro'), '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { dialect: string; authentication: string; observations: Array<{ type: string; data: { system?: { serialNumber?: string } } }> };
    expect(report.dialect).toBe('supermicro-x13');
    expect(report.authentication).toBe('session');
    expect(report.observations.find((o) => o.type === 'NodeInventoryObserved')?.data.system?.serialNumber).toBe(bmcProfileByName('supermicro')!.systems[0]!.serialNumber);
  });

  it('prints a readable summary with the dialect and the unrecognized paths count', async () => {
    const { code, stdout } = await capture(['--mockup', profileMockup('nvidia_gh200')]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^dialect {4}nvidia-openbmc-gh200/m);
    expect(stdout).toMatch(/unrecognized paths: \d+/);
  });

  it('reports an unreachable BMC as a typed error and exits 1', async () => {
    const { code, stderr } = await capture(['http://127.0.0.1:9', '--user', 'root', '--password', 'x', '--timeout', '500']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/DRIVER_UNREACHABLE \(retryable\)/);
  });

  it('rejects a call without a target', async () => {
    expect((await capture([])).code).toBe(2);
  });
});
