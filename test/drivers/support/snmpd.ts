/**
 * Starts a real Net-SNMP `snmpd` in the foreground on a loopback UDP port with its own configuration in a temp
 * dir (no system config read: `-C`), serving APC PowerNet-MIB outlet rows through `override`. Test support only.
 *
 * The persistent-state dir is kept apart from the config: snmpd rewrites `$SNMP_PERSISTENT_DIR/snmpd.conf` on exit.
 */
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Snmpd {
  port: number;
  community: string;
  stop(): Promise<void>;
}

export interface SnmpdSetup {
  sysName: string;
  sysLocation: string;
  sysContact: string;
  sysDescr: string;
  sysObjectId: string;
  outlets: Array<{ index: number; name: string; state: 1 | 2 }>;
}

async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

export async function startSnmpd(setup: SnmpdSetup): Promise<Snmpd> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-snmpd-'));
  const persistent = join(dir, 'persist');
  await mkdir(persistent);
  const port = await freeUdpPort();
  const community = 'fleet-ro';
  const config = join(dir, 'snmpd.conf');
  await writeFile(
    config,
    [
      `agentAddress udp:127.0.0.1:${port}`,
      `rocommunity ${community} 127.0.0.1`,
      `sysName ${setup.sysName}`,
      `sysLocation ${setup.sysLocation}`,
      `sysContact ${setup.sysContact}`,
      `sysDescr ${setup.sysDescr}`,
      `sysObjectID ${setup.sysObjectId}`,
      ...setup.outlets.flatMap((outlet) => [
        `override .1.3.6.1.4.1.318.1.1.12.3.5.1.1.2.${outlet.index} octet_str "${outlet.name}"`,
        `override .1.3.6.1.4.1.318.1.1.12.3.5.1.1.4.${outlet.index} integer ${outlet.state}`,
      ]),
      '',
    ].join('\n'),
  );
  const child = spawn('snmpd', ['-f', '-Lo', '-C', '-c', config, '-p', join(dir, 'snmpd.pid')], {
    env: { ...process.env, SNMP_PERSISTENT_DIR: persistent, MIBS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 5000;
  while (!/NET-SNMP version/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`snmpd did not start: ${output.slice(0, 500)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { port, community, stop };
}
