import { createHash } from 'node:crypto';
import { nameUuid, type EventStore, type ProposedEvent } from '../ledger/index.js';
import type { TargetState } from './target-state.js';

/** A short digest that tells credential versions apart without revealing anything of the secret. */
export function credentialFingerprint(credentialRef: string, version: string): string {
  return createHash('sha256').update(`${credentialRef}\u0000${version}`).digest('hex').slice(0, 16);
}

/**
 * The lockout latches the poller takes: recorded as `LockoutLatched`, retried until the ledger has them, and (cluster
 * mode) remembered for targets not polled here, applied when their shard comes.
 */
export class CredentialLatches {
  /** Latches the ledger has not taken yet (it was unreachable), by node: retried at every flush until stored. */
  readonly unrecorded = new Map<string, ProposedEvent>();
  /** Cluster mode: latches (credential fingerprints) of every known target, polled here or not. */
  readonly known = new Map<string, string>();

  constructor(
    private readonly store: EventStore,
    private readonly cluster: boolean,
    private readonly log?: (message: string, fields?: Record<string, unknown>) => void,
  ) {}

  /** Latches the target on an authentication failure and records the latch. */
  async latch(state: TargetState, credential: { version: string }, error: unknown, at: number): Promise<void> {
    const { target } = state;
    state.latch = { fingerprint: credentialFingerprint(target.credentialRef, credential.version) };
    if (this.cluster) this.known.set(target.nodeId, state.latch.fingerprint);
    const when = new Date(at).toISOString();
    // A stable id: a retry after a lost answer is a replay, not a second latch.
    this.unrecorded.set(target.nodeId, {
      eventId: nameUuid(`lockout-latched:${target.nodeId}:${state.latch.fingerprint}:${when}`),
      type: 'LockoutLatched',
      data: { nodeId: target.nodeId, cause: (error as { code?: string }).code ?? 'DRIVER_AUTH', credentialFingerprint: state.latch.fingerprint, at: when },
      actor: { kind: 'system', id: 'poller' },
    });
    await this.record();
  }

  /**
   * Stores the latches not stored yet. A latch only in memory would vanish at a restart, and the next process would
   * log in again with the credential that locks the account out.
   */
  async record(): Promise<void> {
    for (const [nodeId, event] of [...this.unrecorded]) {
      try {
        await this.store.append(`node-${nodeId}`, [event]);
        if (this.unrecorded.get(nodeId) === event) this.unrecorded.delete(nodeId);
      } catch (failure) {
        this.log?.('could not record a lockout latch yet; retried at the next flush', { nodeId, error: String(failure) });
        return;
      }
    }
  }
}
