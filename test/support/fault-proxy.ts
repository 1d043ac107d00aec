/**
 * A TCP proxy in front of PostgreSQL that a test controls: `mode` decides what happens to the next message that
 * carries a group commit's COMMIT (cut after it reached the server or before, delivered late after its connection
 * was cut, or the connection frozen half-open after the append lock). `onCut` runs when a connection is cut after its
 * COMMIT (the failover tests kill the primary there, so the outcome must be asked of the next one).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export type Mode = { kind: 'pass' } | { kind: 'cut-after-commit'; forwardCommit: boolean } | { kind: 'deliver-late'; delayMs: number } | { kind: 'freeze' };

/** A proxy to PostgreSQL; `mode` decides what happens to the next message that carries the append's COMMIT. */
export class FaultProxy {
  mode: Mode = { kind: 'pass' };
  /** Messages (TCP chunks) the clients have sent through the proxy. */
  sent = 0;
  /** Messages that looked up stored event ids (the long way's first round trip). */
  readonly lookups: string[] = [];
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  port = 0;
  /** Called once the COMMIT of a `cut-after-commit` was forwarded (or withheld), before the connection is cut. */
  onCut: (() => void) | null = null;

  constructor(private readonly upstream: { host: string; port: number }) {
    this.#server = createServer((client) => this.#relay(client));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as { port: number }).port;
  }

  #relay(client: Socket): void {
    const server = connect(this.upstream.port, this.upstream.host);
    let frozen = false;
    for (const socket of [client, server]) {
      this.#sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => this.#sockets.delete(socket));
    }
    server.on('data', (chunk) => {
      if (!frozen) client.write(chunk);
    });
    server.on('close', () => client.destroy());
    // In 'deliver-late', the client's side is cut while its last message is still on its way to the server.
    let keepServer = false;
    client.on('close', () => {
      if (!keepServer) server.destroy();
    });
    let armed = false;
    const commitNames = new Set<string>();
    client.on('data', (chunk) => {
      if (frozen) return;
      this.sent += 1;
      const mode = this.mode;
      const text = chunk.toString('latin1');
      if (text.includes('WHERE event_id = ANY')) this.lookups.push(text);
      if (mode.kind === 'freeze' && text.includes('pg_advisory_xact_lock')) {
        // The lock request goes through; afterwards nothing more in either direction, sockets left open: half-open.
        server.write(chunk);
        setTimeout(() => (frozen = true), 200);
        return;
      }
      // The append sends its rows' write (parsed by text the first time on a connection, bound by name after) and its
      // COMMIT in one message: that message is the one cut.
      // The COMMIT goes as text the first time on a connection (parsed under a name), then as a Bind of that name.
      for (const match of text.matchAll(/(fleet-ledger-[\w-]+)\0COMMIT\0/g)) commitNames.add(match[1]!);
      const carriesCommit = /\bCOMMIT\b/.test(text) || [...commitNames].some((name) => text.includes(`\0${name}\0`));
      const cutting = mode.kind === 'cut-after-commit' || mode.kind === 'deliver-late';
      if (cutting && (text.includes('INSERT INTO ledger_events') || text.includes('fleet-ledger-append-write'))) armed = true;
      if (mode.kind === 'deliver-late' && armed && carriesCommit) {
        armed = false;
        this.mode = { kind: 'pass' };
        keepServer = true;
        client.destroy();
        setTimeout(() => {
          if (!server.destroyed) server.write(chunk);
          setTimeout(() => server.destroy(), 1000);
        }, mode.delayMs);
        return;
      }
      if (mode.kind === 'cut-after-commit' && armed && carriesCommit) {
        armed = false;
        this.mode = { kind: 'pass' };
        if (mode.forwardCommit) server.write(chunk);
        // The server commits (or, without the message, sees its client vanish and rolls back); the answer is lost.
        frozen = true;
        this.onCut?.();
        setTimeout(() => {
          client.destroy();
          server.destroy();
        }, 300);
        return;
      }
      server.write(chunk);
    });
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
