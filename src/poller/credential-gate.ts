import { credentialRefusal, type Credential, type PollTarget } from './poll-target.js';
import type { PollerOptions } from './poller-options.js';

/**
 * Which credential may go to which BMC: bound to its address (`endpoints`) and over https unless the site allows
 * http. Keeps the targets last refused (for the stats) and logs each refusal once.
 */
export class CredentialGate {
  readonly #refusalsLogged = new Set<string>();
  /** Targets whose credential was last refused by its binding (kept for the stats; a node that is accepted again leaves). */
  readonly refused = new Set<string>();

  constructor(private readonly options: Pick<PollerOptions, 'credentials' | 'plainHttpSites' | 'log'>) {}

  /**
   * The target's credential, if it may be sent to the target's address: bound to it (`endpoints`) and over https
   * unless the site allows http. A refusal is logged once per target and reason; the checks are recorded `latched`,
   * so the gap is explained and nobody reads it as darkness.
   */
  credentialFor(target: PollTarget, inForce?: { credentialRef: string; version: string | undefined }): Credential | undefined {
    const credentialRef = inForce?.credentialRef ?? target.credentialRef;
    const version = inForce?.version;
    // The version the ledger says is in force on the node; a store that knows no versions answers its default only
    // when that is the one (a digest-versioned plain file), else nothing: never a version the node may not hold.
    const credential =
      version === undefined
        ? this.options.credentials.get(credentialRef)
        : this.options.credentials.getVersion
          ? this.options.credentials.getVersion(credentialRef, version)
          : ((candidate) => (candidate?.version === version ? candidate : undefined))(this.options.credentials.get(credentialRef));
    if (!credential) return undefined;
    const plainHttp = this.options.plainHttpSites?.some((site) => site === '*' || site === target.site) ?? false;
    const refusal = credentialRefusal(credential, target.baseUrl, plainHttp);
    if (refusal === null) {
      this.refused.delete(target.nodeId);
      return credential;
    }
    this.refused.add(target.nodeId);
    const key = `${target.nodeId}\u0000${target.baseUrl}\u0000${refusal}`;
    if (!this.#refusalsLogged.has(key)) {
      this.#refusalsLogged.add(key);
      this.options.log?.('credential not sent: the BMC address is not one it is bound to', { nodeId: target.nodeId, credentialRef: target.credentialRef, reason: refusal });
    }
    return undefined;
  }
}
