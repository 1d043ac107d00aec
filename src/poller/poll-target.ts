/** A BMC the poller is responsible for, as registered by an operator (credentials by reference only). */
export interface PollTarget {
  nodeId: string;
  site: string;
  rack: string;
  /** Redfish base URL of the BMC. */
  baseUrl: string;
  /** Name of the credential in the credential provider; the secret never enters the log. */
  credentialRef: string;
  /** Configured concurrent-session limit (else the dialect's hint, else 2). */
  sessionLimit?: number;
  /** Expected reporting interval in seconds (the liveness check's period). */
  expectedIntervalS: number;
}

export interface Credential {
  username: string;
  password: string;
  /** Changes whenever the secret changes: a latch on the old version is lifted by a new one. */
  version: string;
}

/** Where secrets come from (a vault, a file, the simulator); the poller asks per visit and keeps nothing. */
export interface CredentialProvider {
  get(credentialRef: string): Credential | undefined;
}

/** The kinds of work a poll does, lightest first. */
export type PollWork = 'liveness' | 'health' | 'inventory' | 'firmware';
export const pollWorks: readonly PollWork[] = ['liveness', 'health', 'inventory', 'firmware'];
