/**
 * A TCP fault proxy: a port that forwards to another until it is cut. The cut is a WAN's: `blackhole` (the default)
 * stops every byte both ways on the connections that exist and holds new ones without answering, as a link that drops
 * packets does (the ends find out by their own timeouts); `reset` closes every connection and refuses new ones. A
 * `restore` closes what was held across the cut (no TCP connection survives a long cut) and forwards again.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export type CutMode = 'blackhole' | 'reset';

export interface FaultProxy {
  port: number;
  /** Connections forwarded since the start (each accepted while the link was up). */
  readonly connections: number;
  readonly cut: boolean;
  cutLink(mode?: CutMode): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: { host: string; port: number }, listenPort = 0): Promise<FaultProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket | null }>();
  let mode: CutMode | null = null;
  let connections = 0;
  const server: Server = createServer((client) => {
    client.on('error', () => undefined);
    if (mode === 'reset') {
      client.destroy();
      return;
    }
    const pair: { client: Socket; upstream: Socket | null } = { client, upstream: null };
    pairs.add(pair);
    client.once('close', () => {
      pair.upstream?.destroy();
      pairs.delete(pair);
    });
    if (mode === 'blackhole') {
      client.pause(); // held: nothing read, nothing answered
      return;
    }
    connections += 1;
    const upstream = connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    get connections() {
      return connections;
    },
    get cut() {
      return mode !== null;
    },
    cutLink(how: CutMode = 'blackhole') {
      mode = how;
      for (const pair of pairs) {
        if (how === 'reset') {
          pair.client.destroy();
          pair.upstream?.destroy();
        } else {
          // Both directions stop: what is in flight stays in flight.
          pair.client.unpipe();
          pair.upstream?.unpipe();
          pair.client.pause();
          pair.upstream?.pause();
        }
      }
    },
    restore() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      pairs.clear();
      mode = null;
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
