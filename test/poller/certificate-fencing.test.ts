/**
 * Certificate events are fenced like every other write of the poller: a `BmcCertificateChanged` (or `Observed`) carries
 * the lease of the node's shard, so one taken by a process whose lease has since passed to another is refused by the
 * ledger and dropped, never recorded beside the new owner's view of the same BMC.
 */
import { describe, expect, it } from 'vitest';
import type { CertificateSummary } from '../../events/index.js';
import { ClusterMember } from '../../src/cluster/index.js';
import { DriverError } from '../../src/drivers/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import { BmcTransports, type PollTarget } from '../../src/poller/index.js';
import { useFreshStore } from '../support/fresh-store.js';

const presented: CertificateSummary = {
  fingerprint: 'b'.repeat(64),
  subject: 'CN=bmc-n1',
  issuer: 'CN=bmc-n1',
  validFrom: '2026-01-01T00:00:00.000Z',
  validTo: '2036-01-01T00:00:00.000Z',
  serial: '0A1B',
  selfSigned: true,
};
const target: PollTarget = { nodeId: 'n1', site: 'fence-site', rack: 'r1', baseUrl: 'https://127.0.0.1:1', credentialRef: 'c', expectedIntervalS: 60 };
const changed = new DriverError('DRIVER_CERTIFICATE_CHANGED', 'another certificate', { certificate: presented, pinnedFingerprint: 'a'.repeat(64), url: target.baseUrl });

async function leaseHandedOver(store: EventStore): Promise<{ superseded: number; current: number }> {
  const a = new ClusterMember({ pool: store.pool, processId: 'cert-a', leaseTtlMs: 60_000, pinned: ['fence-site'] });
  a.shardOf('fence-site', 'n1');
  await a.tickNow();
  const first = a.held().find((lease) => lease.shard === 'fence-site')!;
  await store.pool.query(`UPDATE cluster_leases SET expires_at = now() - interval '1 second' WHERE shard = 'fence-site'`);
  await store.pool.query(`DELETE FROM cluster_members WHERE process_id = 'cert-a'`);
  const b = new ClusterMember({ pool: store.pool, processId: 'cert-b', leaseTtlMs: 60_000, pinned: ['fence-site'], handoverGraceMs: 0 });
  b.shardOf('fence-site', 'n1');
  await b.tickNow();
  const second = b.held().find((lease) => lease.shard === 'fence-site')!;
  return { superseded: first.epoch, current: second.epoch };
}

describe('certificate events under the poller lease', () => {
  const freshStore = useFreshStore();
  const transportsUnder = (store: EventStore, epoch: number) =>
    new BmcTransports({ store, keepAliveMs: 60_000, connectTimeoutMs: 1_000, clock: Date.now, leaseOf: (nodeId) => (nodeId === 'n1' ? { shard: 'fence-site', epoch } : undefined) });

  it('a changed certificate seen under a superseded lease is refused by the ledger and dropped; under the lease held it is recorded with it', async () => {
    const store = freshStore();
    const { superseded, current } = await leaseHandedOver(store);

    const stale = transportsUnder(store, superseded);
    stale.refused(target, changed);
    await stale.record();
    expect(stale.unrecorded).toBe(0); // dropped, not retried for ever
    expect(await store.streamVersion('node-n1')).toBeNull();

    const owner = transportsUnder(store, current);
    owner.refused(target, changed);
    await owner.record();
    const [event] = await store.readStream('node-n1');
    expect(event).toMatchObject({ type: 'BmcCertificateChanged', actor: { kind: 'system', id: 'poller', lease: { shard: 'fence-site', epoch: current } } });
  });
});
