// The fleet dashboard: reads the API with the token from ?token=, follows the live feed, redraws on change.
import { drawBars, drawTimeline } from './charts.js';
import { createFleetCanvas } from './fleet-canvas.js';

const token = new URLSearchParams(location.search).get('token') ?? '';
const states = ['healthy', 'late', 'dark', 'never-contacted', 'maintenance', 'decommissioned'];
const nodes = new Map(); // nodeId -> { nodeId, site, rack, state }
let selection = null;

async function api(path) {
  const response = await fetch(path, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new Error(`${path}: ${response.status} ${body.error?.code ?? ''} ${body.error?.message ?? ''}`);
  }
  return response.json();
}

/** Every page of a list. */
async function all(path) {
  const items = [];
  let cursor = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page = await api(`${path}${cursor ? `${separator}cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

function text(tag, content, attributes = {}) {
  const element = document.createElement(tag);
  element.textContent = content;
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  return element;
}

const fleet = createFleetCanvas(document.getElementById('fleet'), {
  onSelect(target) {
    selection = target;
    void refreshTimeline();
  },
  onHover(label) {
    document.getElementById('hover').textContent = label;
  },
});

function renderCounts() {
  const counts = Object.fromEntries(states.map((s) => [s, 0]));
  for (const node of nodes.values()) counts[node.state] = (counts[node.state] ?? 0) + 1;
  document.getElementById('node-count').textContent = String(nodes.size);
  for (const state of states) document.getElementById(`count-${state}`).textContent = String(counts[state]);
}

/** Full load: every node (after start, and when nodes are registered or decommissioned). */
async function loadNodes() {
  const items = await all('/v1/liveness/nodes?compact=true&limit=5000');
  nodes.clear();
  for (const node of items) nodes.set(node.nodeId, node);
  fleet.setNodes([...nodes.values()]);
  renderCounts();
}

/** Cheap refresh: only the nodes that are not healthy; every other known node is healthy now. */
async function refreshStates() {
  const unhealthy = new Map((await all('/v1/liveness/nodes?compact=true&exclude=healthy&limit=5000')).map((n) => [n.nodeId, n]));
  let unknown = false;
  for (const node of unhealthy.values()) if (!nodes.has(node.nodeId)) unknown = true;
  if (unknown) return loadNodes();
  for (const node of nodes.values()) node.state = unhealthy.get(node.nodeId)?.state ?? 'healthy';
  fleet.draw();
  renderCounts();
}

function alarmItem(alarm) {
  const item = document.createElement('li');
  item.dataset.kind = alarm.kind;
  item.dataset.severity = alarm.severity;
  item.dataset.alarmId = alarm.alarmId;
  item.append(text('span', alarm.severity, { class: `severity ${alarm.severity}` }), text('span', alarm.summary), text('code', alarm.alarmId, { class: 'alarm-id' }));
  if (alarm.acknowledgedBy) item.append(text('span', ` (acknowledged by ${alarm.acknowledgedBy})`));
  if (alarm.folded.length > 0) item.append(text('div', `blast radius: ${alarm.folded.length} dark nodes folded: ${alarm.folded.slice(0, 12).join(', ')}${alarm.folded.length > 12 ? ', …' : ''}`, { class: 'folded' }));
  return item;
}

let othersOpen = false;

/**
 * Open alarms as the API orders them (critical first). Critical ones are always shown in full, however many warnings
 * there are; the rest are folded into one line that opens onto a scroll box of their own.
 */
async function refreshAlarms() {
  const alarms = await all('/v1/alarms?limit=500');
  const list = document.getElementById('alarms');
  const critical = alarms.filter((alarm) => alarm.severity === 'critical');
  const others = alarms.filter((alarm) => alarm.severity !== 'critical');
  list.replaceChildren(...critical.map(alarmItem));
  if (others.length > 0) {
    const details = document.createElement('details');
    details.open = othersOpen || critical.length === 0;
    details.addEventListener('toggle', () => {
      othersOpen = details.open;
    });
    const inner = document.createElement('ul');
    inner.className = 'others';
    inner.append(...others.map(alarmItem));
    details.append(text('summary', `${others.length} ${others.length === 1 ? 'alarm' : 'alarms'} of lower severity (warnings)`), inner);
    const item = document.createElement('li');
    item.dataset.kind = 'lower-severity';
    item.append(details);
    list.append(item);
  }
  if (alarms.length === 0) list.append(text('li', 'no open alarms', { 'data-kind': 'none' }));
}

async function refreshTimeline() {
  if (!selection) return;
  const to = Date.now();
  const scope = selection.nodeId ? `nodeId=${encodeURIComponent(selection.nodeId)}` : `rack=${encodeURIComponent(selection.rack)}`;
  const gaps = await all(`/v1/liveness/gaps?${scope}&from=${new Date(to - 30 * 60_000).toISOString()}&to=${new Date(to).toISOString()}&limit=5000`);
  // Zoom to the gaps: from a little before the earliest one (at least 1 minute, at most 30) up to now.
  const earliest = Math.min(to, ...gaps.map((g) => Date.parse(g.startAt)));
  const span = gaps.length === 0 ? 10 * 60_000 : Math.min(30 * 60_000, Math.max(60_000, (to - earliest) * 1.25));
  const from = to - span;
  const shown = selection.nodeId ? [nodes.get(selection.nodeId)].filter(Boolean) : [...nodes.values()].filter((n) => n.rack === selection.rack);
  document.getElementById('timeline-title').textContent = `${selection.nodeId ? `node ${selection.nodeId}` : `rack ${selection.rack}`}, last ${Math.round(span / 60_000)} minutes: ${gaps.length} gaps`;
  drawTimeline(document.getElementById('timeline'), { nodes: shown, gaps, from, to });
}

async function refreshTables() {
  const [manufacturer, model, firmware, compliance, drift] = await Promise.all([
    api('/v1/inventory?by=manufacturer&limit=50'),
    api('/v1/inventory?by=model&limit=50'),
    api('/v1/inventory?by=bmc_firmware&limit=50'),
    api('/v1/compliance?limit=200'),
    api('/v1/drift?limit=200'),
  ]);
  drawBars(document.getElementById('bars-manufacturer'), manufacturer.items, { colour: '#3a78d8' });
  drawBars(document.getElementById('bars-model'), model.items, { colour: '#6a4fc3' });
  drawBars(document.getElementById('bars-bmc_firmware'), firmware.items, { colour: '#2e9d52' });
  const empty = (columns, what) => {
    const row = document.createElement('tr');
    row.append(text('td', what, { colspan: String(columns) }));
    return [row];
  };
  document.querySelector('#compliance tbody').replaceChildren(
    ...(compliance.items.length === 0 ? empty(5, 'no firmware baseline declared (import an EBOM)') : []),
    ...compliance.items.map((c) => {
      const row = document.createElement('tr');
      row.append(text('td', c.component), text('td', String(c.atBaseline)), text('td', String(c.above)), text('td', String(c.below)), text('td', String(c.unknown)));
      return row;
    }),
  );
  document.querySelector('#drift tbody').replaceChildren(
    ...(drift.items.length === 0 ? empty(6, 'no drift') : []),
    ...drift.items.map((d) => {
      const row = document.createElement('tr');
      row.append(text('td', d.nodeId), text('td', d.field), text('td', d.kind), text('td', d.declared ?? ''), text('td', d.observed ?? ''), text('td', new Date(d.since).toLocaleString()));
      return row;
    }),
  );
}

/** Coalesces refresh requests: at most one in flight, at most one queued. */
function coalesced(run) {
  let running = null;
  let again = false;
  const go = () => {
    if (running) {
      again = true;
      return;
    }
    running = run()
      .catch((error) => console.warn(error))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          setTimeout(go, 250);
        }
      });
  };
  return go;
}

const refreshLive = coalesced(async () => {
  await refreshStates();
  await refreshAlarms();
  if (selection) await refreshTimeline();
});
const reloadNodes = coalesced(loadNodes);

function follow() {
  const status = document.getElementById('feed-status');
  // Resumes by itself with Last-Event-ID after a drop: nothing is missed, nothing repeated.
  const types = 'PollOutcomesRecorded,NodeRegistered,NodeDecommissioned,MaintenanceWindowSet,AlarmAcknowledged,TopologyDeclared,NodeDeclared';
  const feed = new EventSource(`/v1/events/live?types=${types}&payload=none&token=${encodeURIComponent(token)}`);
  let pending = null;
  feed.onopen = () => {
    status.textContent = 'live';
    status.dataset.state = 'live';
  };
  feed.onerror = () => {
    status.textContent = 'reconnecting';
    status.dataset.state = 'reconnecting';
  };
  feed.onmessage = (message) => {
    const event = JSON.parse(message.data);
    if (event.type === 'NodeRegistered' || event.type === 'NodeDecommissioned') reloadNodes();
    // Projections apply an event shortly after it is appended: refresh a moment later, coalesced.
    if (!pending) pending = setTimeout(() => ((pending = null), refreshLive()), 400);
  };
}

const terminal = new Set(['updated', 'already-at-target', 'failed', 'quarantined', 'skipped']);

/** The rollouts panel: one block per rollout, a row of cells per wave (one cell per node, coloured by its state). */
async function refreshRollouts() {
  const { items } = await api('/v1/rollouts');
  const panel = document.getElementById('rollouts');
  if (items.length === 0) return;
  const shown = items.filter((r) => !['completed', 'aborted'].includes(r.status)).concat(items.filter((r) => ['completed', 'aborted'].includes(r.status)).slice(-2));
  const blocks = [];
  for (const summary of shown.slice(0, 4)) {
    const rollout = await api(`/v1/rollouts/${encodeURIComponent(summary.rolloutId)}`);
    const block = document.createElement('div');
    block.className = 'rollout';
    block.dataset.rollout = rollout.rolloutId;
    const done = Object.values(rollout.outcomes).reduce((a, b) => a + b, 0);
    const head = document.createElement('div');
    head.append(text('span', `${rollout.rolloutId} `), text('span', rollout.status + (rollout.stopReason ? ` (${rollout.stopReason})` : ''), { class: 'status', 'data-status': rollout.status }),
      text('span', `  ${rollout.firmware.component} → ${rollout.firmware.version}; ${done}/${rollout.targets} done, ${rollout.inFlight} in flight (cap ${rollout.cap}), ${rollout.outcomes.failed} failed`));
    block.append(head);
    for (const wave of rollout.waves) {
      const row = document.createElement('div');
      row.className = 'wave';
      row.append(text('span', `wave ${wave.index}${wave.canary ? ' canary' : ''}: ${wave.outcomes}/${wave.size}, gate ${wave.gate ?? '-'}`, { class: 'label' }));
      const cells = document.createElement('div');
      cells.className = 'cells';
      for (const node of rollout.nodes.filter((n) => n.wave === wave.index).slice(0, 2000)) {
        const state = node.hold ? 'held' : node.state;
        const cell = text('span', '', { class: `cell${!terminal.has(state) && state !== 'pending' && state !== 'held' ? ' active' : ''}`, 'data-state': state, title: `${node.nodeId}: ${state}${node.hold ? ` (${node.hold})` : ''}` });
        cells.append(cell);
      }
      row.append(cells);
      block.append(row);
    }
    blocks.push(block);
  }
  panel.replaceChildren(...blocks);
}

/**
 * The cluster panel: one row per shard (a site, or a hash range of one) with the process polling it, its lease epoch,
 * seconds until the lease runs out (the database's clock) and how often it changed hands. One process alone polls
 * every site without leases: the panel says so. The summary names the sagas a process drives now, with their epochs.
 */
async function refreshCluster() {
  const cluster = await api('/v1/cluster');
  const processes = new Map(cluster.processes.map((p) => [p.processId, p]));
  const alive = cluster.processes.filter((p) => p.alive).length;
  const driven = cluster.sagas.filter((s) => s.held);
  const sagas = driven.length === 0 ? '' : `; sagas driven now: ${driven.map((s) => `${s.saga} (epoch ${s.epoch}, ${s.heldBy ?? s.owner})`).join(', ')}`;
  document.getElementById('cluster-summary').textContent = (cluster.shards.length === 0
    ? 'one process polls every site (no poll leases)'
    : `${alive} of ${cluster.processes.length} processes alive, ${cluster.shards.filter((s) => s.state === 'held').length} of ${cluster.shards.length} shards held${cluster.answeredBy ? `; answered by ${cluster.answeredBy}` : ''}`) + sagas;
  document.querySelector('#cluster tbody').replaceChildren(
    ...cluster.shards.map((shard) => {
      const owner = shard.owner ? processes.get(shard.owner) : undefined;
      const row = document.createElement('tr');
      row.dataset.shard = shard.shard;
      row.dataset.state = shard.state;
      row.dataset.alive = String(owner?.alive ?? false);
      const expires = shard.state === 'held' || shard.state === 'expired' ? `${Math.round(shard.expiresInS)} s` : '-';
      const lease = shard.state === 'held' && !owner?.alive ? 'held (process dead)' : shard.state;
      row.append(
        text('td', shard.site),
        text('td', shard.shard === shard.site ? '' : shard.shard),
        text('td', shard.owner ?? '-', { class: 'process', title: owner?.apiUrl ?? '' }),
        text('td', owner ? `${owner.host}:${owner.pid}` : '-'),
        text('td', String(shard.epoch)),
        text('td', expires),
        text('td', `${lease}${shard.targets !== undefined ? `, ${shard.targets} BMCs` : ''}`, { class: 'lease' }),
        text('td', shard.handovers > 0 ? `${shard.handovers} (last from ${shard.previousOwner ?? '-'})` : '0'),
      );
      return row;
    }),
  );
}

async function start() {
  if (!token) {
    document.getElementById('feed-status').textContent = 'add ?token=<operator, analyst or admin token> to the address';
    return;
  }
  await loadNodes();
  await Promise.all([refreshAlarms(), refreshTables().catch((error) => console.warn(error))]);
  follow();
  // The projections lag the feed by a moment; a slow periodic refresh catches what a burst left behind.
  setInterval(refreshLive, 5000);
  setInterval(() => void refreshTables().catch((error) => console.warn(error)), 20_000);
  void refreshRollouts().catch((error) => console.warn(error));
  setInterval(() => void refreshRollouts().catch((error) => console.warn(error)), 3_000);
  void refreshCluster().catch((error) => console.warn(error));
  setInterval(() => void refreshCluster().catch((error) => console.warn(error)), 5_000);
  window.addEventListener('resize', () => fleet.setNodes([...nodes.values()]));
}

window.fleetDashboard = { nodes, rackStates: (rack) => fleet.rackStates(rack) };
start().catch((error) => {
  document.getElementById('feed-status').textContent = String(error.message ?? error);
  console.error(error);
});
