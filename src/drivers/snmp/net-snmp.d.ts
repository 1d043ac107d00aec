/**
 * The part of the `net-snmp` package (untyped JavaScript) that the SNMP driver uses.
 */
declare module 'net-snmp' {
  export interface Varbind {
    oid: string;
    type: number;
    value: unknown;
  }
  export interface SessionOptions {
    port?: number;
    retries?: number;
    timeout?: number;
    version?: number;
    transport?: 'udp4' | 'udp6';
  }
  export interface Session {
    get(oids: string[], callback: (error: Error | null, varbinds: Varbind[]) => void): void;
    subtree(oid: string, maxRepetitions: number, feed: (varbinds: Varbind[]) => boolean | void, done: (error: Error | null) => void): void;
    close(): void;
    on(event: 'error', listener: (error: Error) => void): void;
  }
  export function createSession(target: string, community: string, options?: SessionOptions): Session;
  export function isVarbindError(varbind: Varbind): boolean;
  export function varbindError(varbind: Varbind): string;
  export const Version1: number;
  export const Version2c: number;
  const snmp: {
    createSession: typeof createSession;
    isVarbindError: typeof isVarbindError;
    varbindError: typeof varbindError;
    Version1: number;
    Version2c: number;
  };
  export default snmp;
}
