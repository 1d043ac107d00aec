/**
 * Connections that cost what they must, against the simulator over real HTTPS: a BMC that keeps idle connections is
 * checked again over the connection of the last check (no new handshake); one that closes its connection after each
 * answer (iLO 4) gets a new connection per check, its TLS session resumed; one that refuses resumption (iDRAC 8) is
 * never resumed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BmcConnection, RedfishClient } from '../../src/drivers/index.js';
import { BmcTransports, RedfishVisitor, type PollTarget } from '../../src/poller/index.js';
import { startSimulator, type SimBmcInfo, type Simulator } from '../../src/sim/index.js';

const options = { requestTimeoutMs: 5_000, firmwareTimeoutMs: 5_000, visitDeadlineMs: 10_000, sessionLimit: 2 };
const targetOf = (bmc: SimBmcInfo): PollTarget => ({ nodeId: bmc.id, site: 'dc1', rack: bmc.rack, baseUrl: bmc.baseUrl, credentialRef: 'c', expectedIntervalS: 60 });
const credentialOf = (bmc: SimBmcInfo) => ({ username: bmc.username, password: bmc.password, version: '1', endpoints: [new URL(bmc.baseUrl).origin] });

describe('connections to HTTPS BMCs between checks', () => {
  let sim: Simulator;
  let transports: BmcTransports;
  beforeAll(async () => {
    sim = await startSimulator({ bmcs: 3, mockups: ['dell', 'hpe_ilo4_bl460c_gen9', 'dell_idrac8_m630'], tls: true, behaviour: { latencyScale: 0.01 } });
    transports = new BmcTransports({ store: { append: () => Promise.resolve({} as never) }, keepAliveMs: 60_000, connectTimeoutMs: 5_000, clock: Date.now });
  });
  afterAll(async () => {
    await transports?.close();
    await sim?.close();
  });

  it('a BMC that keeps connections is checked over one connection; one that closes them resumes its TLS session; one that refuses resumption is never resumed', async () => {
    const visitor = new RedfishVisitor(transports);
    for (let check = 0; check < 3; check += 1) {
      for (const bmc of sim.bmcs) {
        const result = await visitor.visit(targetOf(bmc), credentialOf(bmc), ['liveness'], options);
        expect(result, `${bmc.fixture} check ${check}`).toMatchObject({ ok: true });
      }
    }
    const byFixture = Object.fromEntries(sim.bmcs.map((bmc) => [bmc.fixture, sim.tlsStats(bmc.id)!]));
    expect(byFixture['dell']).toMatchObject({ handshakes: 1, connectionsPeak: 1 });
    expect(byFixture['hpe_ilo4_bl460c_gen9']).toMatchObject({ handshakes: 3, resumed: 2 });
    expect(byFixture['dell_idrac8_m630']!.resumed).toBe(0);
  });
});

describe('connections let go many at once', () => {
  it('a poller releasing many BMCs at once closes their connections a slice per turn of its event loop', async () => {
    const transports = new BmcTransports({ store: { append: () => Promise.resolve({} as never) }, keepAliveMs: 60_000, connectTimeoutMs: 5_000, clock: Date.now });
    const count = 200;
    for (let index = 0; index < count; index += 1) {
      transports.connectionFor({ nodeId: `n${index}`, site: 'dc1', rack: 'r1', baseUrl: `https://10.0.${index >> 8}.${index & 255}`, credentialRef: 'c', expectedIntervalS: 60 }, 2);
    }
    expect(transports.connectionsHeld).toBe(count);
    // Half released one by one (as targets leave a shard), then the rest by the stop.
    for (let index = 0; index < count / 2; index += 1) transports.release(`n${index}`);
    const held: number[] = [transports.connectionsHeld];
    let closed = false;
    const closing = transports.close().then(() => {
      closed = true;
    });
    while (!closed) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      held.push(transports.connectionsHeld);
    }
    await closing;
    expect(held[0]).toBeGreaterThanOrEqual(count - 32);
    expect(held.at(-1)).toBe(0);
    const largestTurn = Math.max(...held.slice(1).map((now, index) => held[index]! - now));
    expect(largestTurn).toBeLessThanOrEqual(32);
    expect(held.length).toBeGreaterThanOrEqual(count / 32);
  });
});

describe('a check beside a heavy read', () => {
  it("a liveness check is answered while a heavy read's slow requests hold every read connection of the BMC", async () => {
    // The BMC answers checks at once and never answers the read's requests (a firmware collection taking minutes).
    const held: Array<() => void> = [];
    const server = createServer((request, response) => {
      if (request.url === '/redfish/v1/Systems') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"Members":[]}');
        return;
      }
      held.push(() => response.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const connection = new BmcConnection({ origin, trust: { kind: 'insecure' }, connections: 2, checkConnection: true, keepAliveMs: 60_000, connectTimeoutMs: 5_000 });
    const read = new RedfishClient({ baseUrl: origin, authMode: 'none', maxConcurrency: 2, requestTimeoutMs: 60_000, dispatcher: connection.dispatcher });
    const slow = [read.get('/redfish/v1/UpdateService/FirmwareInventory/1'), read.get('/redfish/v1/UpdateService/FirmwareInventory/2')].map((request) => request.catch(() => undefined));
    while (held.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    const check = new RedfishClient({ baseUrl: origin, authMode: 'none', maxConcurrency: 1, requestTimeoutMs: 3_000, dispatcher: connection.checkDispatcher });
    await expect(check.get('/redfish/v1/Systems')).resolves.toMatchObject({ status: 200 });
    for (const release of held) release();
    await Promise.all(slow);
    await connection.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
