/**
 * How a saga's power and firmware actions trust a BMC's certificate: as the poller does. The site's policy comes with
 * the BMC's access (`BmcAccess.tls`: a CA bundle, or insecure as an explicit choice); otherwise the certificate is
 * pinned, and the pin is the one the log holds for the node (`BmcCertificateObserved` at first use, or an operator's
 * `BmcCertificateAccepted`). A node latched by a changed certificate gets no credential from a saga either: the action
 * is refused before any connection, with the same code the poller records.
 */
import type { BmcTlsOptions } from '../../src/drivers/index.js';
import { DriverError } from '../../src/drivers/index.js';
import type { EventStore } from '../../src/ledger/index.js';
import { nodeDecider } from '../node-intents/node-decide.js';
import { loadDeciderState } from './handle-command.js';
import type { BmcAccess } from './step-driver.js';

/** The TLS options a driver for `nodeId` is built with (undefined: plain HTTP, or no access at all). */
export async function sagaBmcTls(store: EventStore, nodeId: string, access: BmcAccess | undefined): Promise<BmcTlsOptions | undefined> {
  if (!access || !access.baseUrl.toLowerCase().startsWith('https:')) return undefined;
  if (access.insecure) return { trust: { kind: 'insecure' }, ...(access.tls?.minVersion ? { minVersion: access.tls.minVersion } : {}) };
  if (access.tls && access.tls.trust.kind !== 'pin') return access.tls;
  const { state } = await loadDeciderState(store, `node-${nodeId}`, nodeDecider);
  const certificate = state.status === 'known' ? state.certificate : undefined;
  if (certificate?.presented !== undefined) {
    throw new DriverError('DRIVER_CERTIFICATE_CHANGED', `${nodeId} presented a certificate other than the one pinned: no credential is sent until an operator accepts it (fleet-ledger nodes accept-certificate)`, {
      url: access.baseUrl,
      ...(certificate.pinned !== undefined ? { pinnedFingerprint: certificate.pinned } : {}),
    });
  }
  // Not pinned yet (the poller has not reached it): trusted at first use, as the poller's first contact would be.
  return { trust: { kind: 'pin', fingerprint: certificate?.pinned }, ...(access.tls?.minVersion ? { minVersion: access.tls.minVersion } : {}) };
}
