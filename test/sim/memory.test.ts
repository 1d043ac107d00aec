import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startSimulator, type SimBmcInfo, type Simulator } from '../../src/sim/index.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapBytes(): number {
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external + usage.arrayBuffers;
}

/** Heap taken by a running simulator of `bmcs` BMCs, each of which has opened one Redfish session. */
async function heapOf(bmcs: number): Promise<{ bytes: number; rss: number; sim: Simulator }> {
  const before = heapBytes();
  const sim = await startSimulator({ bmcs, mockups: ['dell', 'hpe', 'nvidia_gb200'], addressing: 'per-address', behaviour: { latencyScale: 0 } });
  // A client of its own, closed before measuring, so the client's connections are not counted as the simulator's.
  const client = new Agent({ connections: 1 });
  const open = async (bmc: SimBmcInfo): Promise<void> => {
    const response = await request(`${bmc.baseUrl}/redfish/v1/SessionService/Sessions`, {
      dispatcher: client,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ UserName: bmc.username, Password: bmc.password }),
    });
    await response.body.dump();
    expect(response.statusCode).toBe(201);
  };
  for (let at = 0; at < sim.bmcs.length; at += 64) await Promise.all(sim.bmcs.slice(at, at + 64).map(open));
  await client.close();
  await sleep(200);
  return { bytes: heapBytes() - before, rss: process.memoryUsage().rss, sim };
}

describe('memory', { timeout: 30_000 }, () => {
  it('2,000 BMCs share their capture trees and cost a few kilobytes each', async () => {
    const small = await heapOf(200);
    await small.sim.close();
    const large = await heapOf(2200);
    const captures = large.sim.captures();
    await large.sim.close();

    const perBmc = (large.bytes - small.bytes) / 2000;
    const sharedBytes = captures.reduce((sum, capture) => sum + capture.bytes, 0);
    process.stdout.write(
      `sim memory: ${Math.round(perBmc)} bytes of heap per BMC (listener + state + one open session), ` +
        `${(sharedBytes / 1048576).toFixed(1)} MiB of shared capture JSON, rss ${Math.round(large.rss / 1048576)} MiB at 2,200 BMCs\n`,
    );
    expect(captures.map((capture) => capture.bmcs)).toEqual([734, 733, 733]);
    // 2 GB for 25,000 BMCs leaves 80 KB each; stay far below.
    expect(perBmc).toBeLessThan(10_000);
  }, 60_000);
});
