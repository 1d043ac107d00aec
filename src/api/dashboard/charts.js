// Small canvas charts: horizontal bars for inventory counts, and the gap timeline.

function sized(canvas, height) {
  const width = canvas.parentElement.clientWidth - 4;
  canvas.width = Math.max(200, width);
  canvas.height = height;
  return canvas.getContext('2d');
}

/** Horizontal bars: one per value, longest first (the API orders them), at most `max` bars. */
export function drawBars(canvas, counts, { max = 8, colour = '#3a78d8' } = {}) {
  const shown = counts.slice(0, max);
  const rowHeight = 18;
  const context = sized(canvas, Math.max(30, shown.length * rowHeight + 4));
  context.font = '11px system-ui, sans-serif';
  context.textBaseline = 'middle';
  const total = Math.max(1, ...shown.map((c) => c.nodes));
  const labelWidth = Math.min(220, canvas.width * 0.45);
  shown.forEach((entry, index) => {
    const y = index * rowHeight + 2;
    const label = entry.value ?? '(not observed yet)';
    context.fillStyle = '#334';
    context.fillText(label.length > 34 ? `${label.slice(0, 33)}…` : label, 0, y + rowHeight / 2);
    const barWidth = ((canvas.width - labelWidth - 50) * entry.nodes) / total;
    context.fillStyle = colour;
    context.fillRect(labelWidth, y + 3, Math.max(1, barWidth), rowHeight - 6);
    context.fillStyle = '#334';
    context.fillText(String(entry.nodes), labelWidth + barWidth + 4, y + rowHeight / 2);
  });
  if (shown.length === 0) {
    context.fillStyle = '#889';
    context.fillText('nothing observed yet', 0, 14);
  }
}

/**
 * The gap timeline: one row per node, time running left to right over [from, to]. Contact is drawn as a bar;
 * a gap is drawn as a gap (nothing), with its misses marked by a thin red line under it; an open gap runs to now.
 */
export function drawTimeline(canvas, { nodes, gaps, from, to }) {
  const rowHeight = 14;
  const labelWidth = 120;
  const context = sized(canvas, Math.max(40, nodes.length * rowHeight + 20));
  const span = Math.max(1, to - from);
  const width = canvas.width - labelWidth - 8;
  const xOf = (time) => labelWidth + (Math.min(Math.max(time, from), to) - from) / span * width;
  context.font = '10px system-ui, sans-serif';
  context.textBaseline = 'middle';
  const byNode = new Map(nodes.map((n) => [n.nodeId, []]));
  for (const gap of gaps) byNode.get(gap.nodeId)?.push(gap);
  nodes.forEach((node, index) => {
    const y = index * rowHeight + 2;
    context.fillStyle = '#334';
    context.fillText(node.nodeId.length > 20 ? `…${node.nodeId.slice(-19)}` : node.nodeId, 0, y + rowHeight / 2);
    const registered = node.firstContactAt ? Math.max(from, node.firstContactAt) : from;
    const intervals = (byNode.get(node.nodeId) ?? []).map((g) => [Date.parse(g.startAt), g.endAt ? Date.parse(g.endAt) : to]).sort((a, b) => a[0] - b[0]);
    // Contact: the complement of the gaps, from the first instant shown (never interpolated across a gap).
    let cursor = registered;
    context.fillStyle = node.state === 'never-contacted' ? '#dfe1e4' : '#2e9d52';
    for (const [start, end] of intervals) {
      if (start > cursor) context.fillRect(xOf(cursor), y + 3, xOf(start) - xOf(cursor), rowHeight - 6);
      cursor = Math.max(cursor, end);
    }
    if (cursor < to && node.state !== 'never-contacted') context.fillRect(xOf(cursor), y + 3, xOf(to) - xOf(cursor), rowHeight - 6);
    context.fillStyle = '#c62828';
    for (const [start, end] of intervals) context.fillRect(xOf(start), y + rowHeight - 3, Math.max(1, xOf(end) - xOf(start)), 1);
  });
  const axisY = nodes.length * rowHeight + 8;
  context.fillStyle = '#667';
  context.fillText(new Date(from).toLocaleTimeString(), labelWidth, axisY);
  const end = new Date(to).toLocaleTimeString();
  context.fillText(end, canvas.width - context.measureText(end).width - 4, axisY);
}
