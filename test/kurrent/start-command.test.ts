/**
 * `fleet-ledger start --kurrent-port P` serves the KurrentDB face beside the API, over the same log and tokens, and
 * Ctrl-C stops it with everything else (a client's open subscription does not hold the process).
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EventStoreDBClient, jsonEvent, type AllStreamResolvedEvent } from '@eventstore/db-client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freshDatabase } from '../support/backends.js';
import { openssl, registration, testCertificate } from './support/kurrent-harness.js';
import { freePort } from '../../bench/support/free-port.js';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));


describe.skipIf(!openssl.runnable)(openssl.title('fleet-ledger start --kurrent-port'), { timeout: 120_000 }, () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('serves KurrentDB clients with the API\'s tokens over TLS, and Ctrl-C stops it cleanly with a subscription open', async () => {
    const database = await freshDatabase(inject('embeddedAdminUrl'));
    cleanups.push(() => database.drop());
    const certificate = testCertificate();
    cleanups.push(() => rmSync(certificate.dir, { recursive: true, force: true }));
    const [apiPort, kurrentPort] = [await freePort(), await freePort()];
    const token = 'start-command-operator-token';
    const readerToken = 'start-command-analyst-token';
    const child = spawn(
      process.execPath,
      ['--unhandled-rejections=strict', '--import', 'tsx', main, 'start', '--no-sim', '--port', String(apiPort), '--kurrent-port', String(kurrentPort), '--kurrent-tls-cert', certificate.certPath, '--kurrent-tls-key', certificate.keyPath, '--data-dir', `${certificate.dir}/data`],
      { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DATABASE_URL: database.url, FLEET_LEDGER_TOKENS: `${token}=alice:operator,${readerToken}=bob:analyst` } },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    let gone = false;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => ((gone = true), resolve(code))));
    cleanups.push(() => {
      if (!gone) process.kill(-child.pid!, 'SIGKILL');
    });
    const deadline = Date.now() + 90_000;
    while (!output.includes('KurrentDB clients')) {
      if (gone || Date.now() > deadline) throw new Error(`the KurrentDB face did not start:\n${output.slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(output).toContain(`esdb://127.0.0.1:${kurrentPort}?tls=true`);

    const client = EventStoreDBClient.connectionString(`esdb://alice:${token}@127.0.0.1:${kurrentPort}?tls=true&tlsCAFile=${encodeURIComponent(certificate.caPath)}`);
    const reader = EventStoreDBClient.connectionString(`esdb://bob:${readerToken}@127.0.0.1:${kurrentPort}?tls=true&tlsCAFile=${encodeURIComponent(certificate.caPath)}`);
    const seen: string[] = [];
    const subscription = reader.subscribeToAll({ fromPosition: 'start' });
    subscription.on('data', (resolved: AllStreamResolvedEvent) => seen.push(resolved.event!.type));
    subscription.on('error', () => undefined);
    const result = await client.appendToStream('node-dc1-r01-n01', jsonEvent({ type: 'NodeRegistered', data: registration('dc1-r01-n01') }), { expectedRevision: 'no_stream' });
    expect(result.success).toBe(true);
    while (!seen.includes('NodeRegistered')) {
      if (Date.now() > deadline) throw new Error('the subscription did not deliver the append');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    expect(output).toContain('stopped cleanly');
    await client.dispose();
    await reader.dispose();
  });
});
