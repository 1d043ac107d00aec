/**
 * Starts Debian's `ipmi_sim` (OpenIPMI) on a loopback UDP port with a minimal lan.conf and an emulation file that
 * gives it sensors (full SDR records written byte by byte) and product FRU data, so the IPMI driver is tested
 * against a real RMCP+ peer. Test support only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SimSensor {
  number: number;
  name: string;
  /** IPMI sensor type (0x01 temperature, 0x04 fan, 0x0b other units-based). */
  type: number;
  /** IPMI unit code (1 degrees C, 18 RPM, 6 Watts). */
  unit: number;
  /** Linear factor M: reading = M * raw. */
  m: number;
  raw: number;
}

export interface SimFru {
  manufacturer: string;
  product: string;
  partNumber: string;
  serial: string;
}

export interface IpmiSim {
  port: number;
  username: string;
  password: string;
  stop(): Promise<void>;
}

function ascii(text: string): number[] {
  return [0xc0 | text.length, ...Buffer.from(text, 'ascii')];
}

/** An SDR type 01h (full sensor record), threshold-based, no thresholds readable. */
export function fullSensorRecord(recordId: number, sensor: SimSensor): number[] {
  const body = [
    0x20, 0x00, sensor.number, // owner, LUN, sensor number
    0x07, 0x01, // entity: system board, instance 1
    0x63, 0x40, // initialization (scanning + events), capabilities (auto re-arm, no thresholds)
    sensor.type, 0x01, // sensor type, event/reading type: threshold
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // assertion, deassertion, reading masks
    0x00, sensor.unit, 0x00, // units: unsigned, base unit, no modifier
    0x00, // linear
    sensor.m & 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, // M, tolerance, B, accuracy, exponents
    0x00, // analog characteristics
    0x00, 0xff, 0x00, 0xff, 0x00, // nominal, normal max/min, sensor max/min
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // thresholds
    0x00, 0x00, // hysteresis
    0x00, 0x00, // reserved
    0x00, // OEM
    ...ascii(sensor.name),
  ];
  return [recordId & 0xff, recordId >> 8, 0x51, 0x01, body.length, ...body];
}

function checksum(bytes: number[]): number {
  return (0x100 - (bytes.reduce((sum, byte) => sum + byte, 0) & 0xff)) & 0xff;
}

/** FRU data: a common header and a product info area (IPMI FRU specification 1.0). */
export function fruData(fru: SimFru): number[] {
  const area = [0x01, 0x00, 0x00, ...ascii(fru.manufacturer), ...ascii(fru.product), ...ascii(fru.partNumber), 0xc0, ...ascii(fru.serial), 0xc0, 0xc0, 0xc1];
  while ((area.length + 1) % 8 !== 0) area.push(0x00);
  area[1] = (area.length + 1) / 8;
  area.push(checksum(area));
  const header = [0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00];
  header.push(checksum(header));
  return [...header, ...area];
}

const hex = (byte: number): string => `0x${byte.toString(16).padStart(2, '0')}`;

async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/**
 * Starts ipmi_sim and resolves once it has bound its port. A port found free can be taken before ipmi_sim binds it
 * (by another test's UDP client, or by the readiness probe below at the wrong moment): ipmi_sim then exits at once,
 * and it is started again on another port, up to five times.
 */
export async function startIpmiSim(options: { sensors: SimSensor[]; fru: SimFru }): Promise<IpmiSim> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startIpmiSimOnce(options);
    } catch (error) {
      if (attempt >= 5 || !(error instanceof Error) || !error.message.startsWith('ipmi_sim exited early')) throw error;
    }
  }
}

async function startIpmiSimOnce(options: { sensors: SimSensor[]; fru: SimFru }): Promise<IpmiSim> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-ipmi-sim-'));
  const state = join(dir, 'state');
  await mkdir(state);
  const port = await freeUdpPort();
  const username = 'fleet';
  const password = 'fleet-secret';
  await writeFile(
    join(dir, 'lan.conf'),
    [
      'name "fleetsim"',
      'set_working_mc 0x20',
      '  startlan 1',
      `    addr 127.0.0.1 ${port}`,
      '    priv_limit admin',
      '    allowed_auths_callback none md2 md5 straight',
      '    allowed_auths_user none md2 md5 straight',
      '    allowed_auths_operator none md2 md5 straight',
      '    allowed_auths_admin none md2 md5 straight',
      '    guid a123456789abcdefa123456789abcdef',
      '  endlan',
      `user 2 true "${username}" "${password}" admin 10 none md2 md5 straight`,
      '',
    ].join('\n'),
  );
  const fru = fruData(options.fru);
  const emu = [
    'mc_setbmc 0x20',
    'mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr',
    'sel_enable 0x20 1000 0x0a',
    ...options.sensors.map((sensor, index) => `main_sdr_add 0x20 ${fullSensorRecord(index + 1, sensor).map(hex).join(' ')}`),
    ...options.sensors.flatMap((sensor) => [
      `sensor_add 0x20 0 ${hex(sensor.number)} ${hex(sensor.type)} 0x01`,
      `sensor_set_value 0x20 0 ${hex(sensor.number)} ${hex(sensor.raw)} 0`,
    ]),
    `mc_add_fru_data 0x20 0 ${hex(fru.length)} data ${fru.map(hex).join(' ')}`,
    'mc_enable 0x20',
    '',
  ].join('\n');
  await writeFile(join(dir, 'sim.emu'), emu);
  // ipmi_sim reads commands from stdin even with -n and aborts when stdin cannot be polled (/dev/null), so it
  // gets a pipe that stays open until stop().
  const child: ChildProcess = spawn('ipmi_sim', ['-c', join(dir, 'lan.conf'), '-f', join(dir, 'sim.emu'), '-s', state, '-n'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  // Wait until the UDP port is bound by the simulator (binding it ourselves fails then).
  const deadline = Date.now() + 5000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`ipmi_sim exited early: ${output.slice(0, 500)}`);
    }
    const probe = createSocket('udp4');
    const bound = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(true));
      probe.bind(port, '127.0.0.1', () => resolve(false));
    });
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    if (bound) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`ipmi_sim did not bind port ${port}: ${output.slice(0, 500)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { port, username, password, stop };
}
