/**
 * A Patroni cluster to try a failover by hand (docs/failover.md): one etcd, three PostgreSQL nodes under Patroni
 * (synchronous_mode strict, synchronous_commit on) and HAProxy in front, on loopback ports in a temp folder, with an
 * empty `fleet_ledger` database. Prints the `DATABASE_URL` to start the ledger with and the commands to see the cluster
 * and kill its primary; runs until Ctrl-C, then stops everything and removes the folder (`--keep` leaves it).
 *
 *   npm run sandbox:patroni [-- --keep] [-- --asynchronous]
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { findPatroniTools, startPatroniCluster } from './support/patroni-cluster.js';

const { values } = parseArgs({ options: { keep: { type: 'boolean', default: false }, asynchronous: { type: 'boolean', default: false } } });
const tools = findPatroniTools();
if (!tools.found) {
  process.stderr.write(`sandbox:patroni: ${tools.reason}\n`);
  process.exit(2);
}
const cluster = await startPatroniCluster({ replication: values.asynchronous ? 'asynchronous' : 'synchronous', keep: values.keep, log: (line) => process.stderr.write(`[patroni] ${line.slice(0, 200)}\n`) });
const admin = new pg.Client({ connectionString: cluster.primaryUrl });
await admin.connect();
await admin.query('CREATE DATABASE fleet_ledger');
await admin.end();
const node = cluster.nodes[0]!;
process.stdout.write(
  [
    '',
    `Patroni cluster in ${cluster.base} (${values.asynchronous ? 'asynchronous' : 'synchronous_mode strict, synchronous_commit on'})`,
    '',
    'Start the ledger on it (another terminal):',
    `  DATABASE_URL=${cluster.database(cluster.primaryUrl, 'fleet_ledger')} \\`,
    `  DATABASE_READ_URL=${cluster.database(cluster.replicaUrl, 'fleet_ledger')} npm start -- --bmcs 500`,
    '',
    'See the cluster, then kill its primary:',
    `  patronictl -c ${node.dataDir.replace(/data$/, 'patroni.yml')} list`,
    `  curl -s 127.0.0.1:${node.restPort}/cluster`,
    ...cluster.nodes.map((n) => `  kill -9 $(head -1 ${n.dataDir}/postmaster.pid)    # when ${n.name} is the leader`),
    '',
    'Ctrl-C stops the cluster.',
    '',
  ].join('\n'),
);
await new Promise<void>((resolve) => {
  process.once('SIGINT', () => resolve());
  process.once('SIGTERM', () => resolve());
});
await cluster.stop();
