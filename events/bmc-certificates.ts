import { z } from 'zod';
import { defineEvent } from './define-event.js';
import { instantSchema, nodeIdSchema } from './common.js';

/**
 * What a BMC's TLS certificate is, as the poller saw it, and what operators decided about it. A BMC's first
 * certificate is pinned (trust on first use); a different one later stops every credential from going to it until an
 * operator accepts it. Only public facts about a certificate are recorded: never a key.
 */

/** The public facts of one certificate. */
export const certificateSummarySchema = z.object({
  /** SHA-256 of the DER certificate, lower-case hex: what is pinned. */
  fingerprint: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 fingerprint: 64 lower-case hex digits'),
  subject: z.string().max(1000),
  issuer: z.string().max(1000),
  validFrom: instantSchema,
  validTo: instantSchema,
  /** The serial number, upper-case hex as OpenSSL prints it. */
  serial: z.string().regex(/^[0-9A-F]{1,64}$/, 'a serial number in upper-case hex'),
  /** Whether the certificate signs itself (issuer is subject): what nearly every BMC serves out of the box. */
  selfSigned: z.boolean(),
});
export type CertificateSummary = z.output<typeof certificateSummarySchema>;

/** How the poller trusted a certificate: pinned at first use, by an operator's acceptance, verified by the site CA, or not verified at all (the site is configured `insecure`). */
export const certificateTrustSchema = z.enum(['first-use', 'accepted', 'site-ca', 'insecure']);
export type CertificateTrust = z.output<typeof certificateTrustSchema>;

export const BmcCertificateObserved = defineEvent({
  family: 'liveness',
  type: 'BmcCertificateObserved',
  description: 'A BMC presented a TLS certificate the ledger had not recorded for it, and the poller trusted it (pinned at first use, accepted by an operator, or verified by the site CA).',
  schema: z.object({
    nodeId: nodeIdSchema,
    /** The origin the certificate was presented at (`https://10.20.1.7`). */
    address: z.string().min(1).max(300),
    certificate: certificateSummarySchema,
    trust: certificateTrustSchema,
    at: instantSchema,
  }),
});

export const BmcCertificateChanged = defineEvent({
  family: 'liveness',
  type: 'BmcCertificateChanged',
  description: 'A BMC presented a certificate other than the one pinned for it: no credential was sent, and none will be until an operator accepts the new certificate or the site names a CA that signs it.',
  schema: z.object({
    nodeId: nodeIdSchema,
    address: z.string().min(1).max(300),
    pinnedFingerprint: certificateSummarySchema.shape.fingerprint,
    presented: certificateSummarySchema,
    at: instantSchema,
  }),
});

export const BmcCertificateAccepted = defineEvent({
  family: 'operator-intent',
  type: 'BmcCertificateAccepted',
  description: 'An operator accepts a certificate for a BMC (after a reflash, say): it is pinned from now on, and a latch on a changed certificate is lifted.',
  schema: z.object({
    nodeId: nodeIdSchema,
    fingerprint: certificateSummarySchema.shape.fingerprint,
    reason: z.string().min(1).max(1000),
  }),
});

export const bmcCertificateEvents = [BmcCertificateObserved, BmcCertificateChanged, BmcCertificateAccepted] as const;

export type BmcCertificateObservedData = z.infer<typeof BmcCertificateObserved.schema>;
export type BmcCertificateChangedData = z.infer<typeof BmcCertificateChanged.schema>;
export type BmcCertificateAcceptedData = z.infer<typeof BmcCertificateAccepted.schema>;
