/** The protocols the poller polls, each through its own driver. */
export type PollProtocol = 'redfish' | 'ipmi' | 'snmp';
export const pollProtocols: readonly PollProtocol[] = ['redfish', 'ipmi', 'snmp'];

/** A BMC the poller is responsible for, as registered by an operator (credentials by reference only). */
export interface PollTarget {
  nodeId: string;
  site: string;
  rack: string;
  /**
   * How the BMC is reached: its Redfish base URL (`https://bmc.example`), for IPMI (RMCP+ over UDP, no Redfish)
   * `ipmi://host[:port]`, for an SNMP device (a PDU's management card, SNMP v2c over UDP) `snmp://host[:port]`.
   */
  baseUrl: string;
  /** `redfish` (default), `ipmi` or `snmp`. */
  protocol?: PollProtocol;
  /** Name of the credential in the credential provider; the secret never enters the log. */
  credentialRef: string;
  /** Configured concurrent-session limit (else the dialect's hint, else 2). */
  sessionLimit?: number;
  /** Expected reporting interval in seconds (the liveness check's period). */
  expectedIntervalS: number;
}

export interface Credential {
  username: string;
  /** For an SNMP v2c device, the community string (the username is not used). */
  password: string;
  /** Changes whenever the secret changes: a latch on the old version is lifted by a new one. */
  version: string;
  /**
   * Where this secret may be sent: IPv4 networks (`10.20.0.0/16`), host patterns (`10.20.*.*`, `bmc-*.ams1.example.com`)
   * or origins with their scheme (`https://bmc-*.ams1.example.com:8443`); `*` stands for any run of characters within one
   * label of the name (or the port). A BMC address
   * that matches none is never sent the secret, so re-registering a node at another host cannot harvest it.
   */
  endpoints: readonly string[];
}

/**
 * The poll address of a registered BMC: Redfish addresses as given, IPMI ones as `ipmi://host[:port]`, SNMP ones as
 * `snmp://host[:port]` (registrations give them as `host[:port]`).
 */
export function pollAddress(protocol: string, address: string): string {
  if (protocol !== 'ipmi' && protocol !== 'snmp') return address;
  if (address.toLowerCase().startsWith(`${protocol}://`)) return address;
  return `${protocol}://${address.replace(/^[a-z]+:\/\//i, '')}`;
}

/** The protocol an address names by its scheme: `ipmi://` and `snmp://`, else Redfish. */
export function protocolOfAddress(address: string): PollProtocol {
  const scheme = /^([a-z]+):\/\//i.exec(address)?.[1]?.toLowerCase();
  return scheme === 'ipmi' || scheme === 'snmp' ? scheme : 'redfish';
}

/** Why a credential may not be sent to a BMC address, or null when it may. */
export function credentialRefusal(credential: Pick<Credential, 'endpoints'>, baseUrl: string, plainHttpAllowed: boolean): string | null {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return `the BMC address ${JSON.stringify(baseUrl)} is not a URL`;
  }
  if (url.protocol === 'http:' && !plainHttpAllowed) return `plain http to ${url.host}: https is required unless the site allows http`;
  // IPMI's RMCP+ authenticates and encrypts on its own (lanplus): its addresses are bound like any other. An SNMP v2c
  // community travels in clear on every request, as the protocol has it: bound to the device's address all the same.
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'ipmi:' && url.protocol !== 'snmp:') return `the BMC address scheme ${url.protocol} is not http(s), ipmi or snmp`;
  const origin = `${url.protocol}//${url.host}`.toLowerCase();
  const host = url.hostname.toLowerCase();
  const matches = credential.endpoints.some((pattern) => {
    const lowered = pattern.trim().toLowerCase();
    const cidr = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(lowered);
    if (cidr) {
      const address = ipv4(host);
      const network = ipv4(cidr[1]!);
      const bits = Number(cidr[2]);
      if (address === null || network === null || bits > 32) return false;
      const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
      return ((address & mask) >>> 0) === ((network & mask) >>> 0);
    }
    const subject = lowered.includes('://') ? origin : host;
    // `*` stays inside one label (or the port): `10.20.*` never matches `10.20.1.1.attacker.example`.
    const glob = lowered.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^./:]*');
    return new RegExp(`^${glob}$`).test(subject);
  });
  return matches ? null : `${url.host} matches none of the endpoints the credential is bound to`;
}

/**
 * Where secrets come from (a vault, a file, the simulator); the poller asks per visit and keeps nothing. A versioned
 * store (`src/credentials`) also answers `getVersion`: the poller then asks for the version the ledger says is in
 * force on the node (`BmcPasswordChanged`), never for whatever is latest.
 */
export interface CredentialProvider {
  /** The reference's default version. */
  get(credentialRef: string): Credential | undefined;
  /** One version of the reference; undefined when it is not held. Without it, only the default is known. */
  getVersion?(credentialRef: string, version: string): Credential | undefined;
}

/** The kinds of work a poll does, lightest first. */
export type PollWork = 'liveness' | 'health' | 'inventory' | 'firmware';
export const pollWorks: readonly PollWork[] = ['liveness', 'health', 'inventory', 'firmware'];

function ipv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((part) => !/^\d{1,3}$/.test(part) || Number(part) > 255)) return null;
  return parts.reduce((value, part) => ((value << 8) | Number(part)) >>> 0, 0);
}
