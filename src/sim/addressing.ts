/**
 * How BMCs are reached. `per-address`: each BMC listens on its own loopback address (`http://127.1.0.7:8443`),
 * which costs one file descriptor per BMC. `wildcard`: one listener on 0.0.0.0 that tells BMCs apart by the
 * loopback address a connection was made to (connections from anywhere but loopback are dropped). `path-prefix`:
 * one listener on 127.0.0.1 and a base URL per BMC (`http://127.0.0.1:8443/bmc/bmc-00007`). `auto` picks
 * per-address when the descriptors fit under the process limit, else wildcard.
 */
import { readFileSync } from 'node:fs';

export type Addressing = 'per-address' | 'wildcard' | 'path-prefix';
export type AddressingChoice = Addressing | 'auto';

/** Descriptors kept free for client sockets and everything else the process opens. */
const DESCRIPTOR_RESERVE = 2048;

/**
 * The loopback address of BMC `index`: 127.A.B.C with C in 1..254 (no .0 or .255), starting at 127.1.0.1, so
 * 127.0.0.1 stays the control address. Linux routes all of 127/8 to lo without any setup.
 */
export function loopbackAddress(index: number): string {
  const perB = 254;
  const c = (index % perB) + 1;
  const b = Math.floor(index / perB) % 256;
  const a = 1 + Math.floor(index / (perB * 256));
  if (a > 254) throw new RangeError(`no loopback address for BMC ${index}`);
  return `127.${a}.${b}.${c}`;
}

/** The soft limit on open files of this process (Linux), or 1024 when it cannot be read. */
export function descriptorLimit(): number {
  try {
    const limits = readFileSync('/proc/self/limits', 'utf8');
    const match = /Max open files\s+(\d+|unlimited)/.exec(limits);
    if (match?.[1] === 'unlimited') return Number.MAX_SAFE_INTEGER;
    if (match?.[1]) return Number(match[1]);
  } catch {
    // Not Linux: assume the common default.
  }
  return 1024;
}

export function chooseAddressing(choice: AddressingChoice, bmcs: number): Addressing {
  if (choice !== 'auto') return choice;
  if (process.platform !== 'linux') return 'path-prefix';
  // Past the descriptor limit, one wildcard listener still gives every BMC its own address (and so its own
  // origin: Redfish clients resolve `@odata.id` paths against the host, not a path prefix).
  return bmcs + DESCRIPTOR_RESERVE <= descriptorLimit() ? 'per-address' : 'wildcard';
}
