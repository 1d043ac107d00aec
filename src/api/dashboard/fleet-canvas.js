// The fleet as one canvas: every node a cell, grouped by site then rack, coloured by liveness state.
// Drawn with fillRect only (25,000 cells take a few milliseconds); hit-testing is arithmetic on the layout.

export const stateColours = {
  healthy: '#2e9d52',
  late: '#e0a21b',
  dark: '#1b1b1b',
  'never-contacted': '#9aa0a6',
  maintenance: '#3a78d8',
  decommissioned: '#d9d9d9',
};

const labelHeight = 14;
const collator = new Intl.Collator(undefined, { numeric: true });
const siteHeight = 18;
const rackGap = 8;

/** Cell size from fleet size: big cells for a demo of 60, small ones for 25,000. */
function cellSizeFor(count) {
  if (count <= 200) return 14;
  if (count <= 2000) return 9;
  if (count <= 10000) return 6;
  return 5;
}

export function createFleetCanvas(canvas, { onSelect, onHover }) {
  const context = canvas.getContext('2d');
  let racks = []; // { site, rack, nodes: [{ nodeId, state }], x, y, cols, rows }
  let sites = []; // { site, y }
  let cell = 14;

  function layout(nodes) {
    cell = cellSizeFor(nodes.length);
    const width = Math.max(300, canvas.parentElement.clientWidth - 4);
    const bySite = new Map();
    for (const node of nodes) {
      const site = node.site ?? '(no site)';
      const rack = node.rack ?? '(no rack)';
      if (!bySite.has(site)) bySite.set(site, new Map());
      const siteRacks = bySite.get(site);
      if (!siteRacks.has(rack)) siteRacks.set(rack, []);
      siteRacks.get(rack).push(node);
    }
    racks = [];
    sites = [];
    let y = 0;
    for (const site of [...bySite.keys()].sort()) {
      sites.push({ site, y });
      y += siteHeight;
      let x = 0;
      let rowHeight = 0;
      const siteRacks = bySite.get(site);
      for (const rack of [...siteRacks.keys()].sort(collator.compare)) {
        const members = siteRacks.get(rack).sort((a, b) => collator.compare(a.nodeId, b.nodeId));
        const cols = members.length > 48 ? 6 : members.length > 16 ? 4 : 2;
        const rows = Math.ceil(members.length / cols);
        const blockWidth = Math.max(cols * cell, cell >= 9 ? 36 : 0);
        const blockHeight = rows * cell + (cell >= 6 ? labelHeight : 2);
        if (x > 0 && x + blockWidth > width) {
          x = 0;
          y += rowHeight + rackGap;
          rowHeight = 0;
        }
        racks.push({ site, rack, nodes: members, x, y, cols, rows, width: blockWidth, height: blockHeight });
        x += blockWidth + rackGap;
        rowHeight = Math.max(rowHeight, blockHeight);
      }
      y += rowHeight + rackGap * 2;
    }
    canvas.width = width;
    canvas.height = Math.max(40, y);
  }

  function draw() {
    context.clearRect(0, 0, canvas.width, canvas.height);
    context.font = '11px system-ui, sans-serif';
    context.textBaseline = 'top';
    for (const { site, y } of sites) {
      context.fillStyle = '#1d2125';
      context.fillText(`site ${site}`, 0, y + 2);
    }
    const inner = cell > 6 ? cell - 2 : cell - 1;
    for (const block of racks) {
      const top = block.y + (cell >= 6 ? labelHeight : 2);
      if (cell >= 6) {
        context.fillStyle = '#556';
        context.fillText(block.rack, block.x, block.y + 1, block.width);
      }
      // Neighbours mostly share a state: set the colour only when it changes (fillStyle parsing dominates).
      let current = null;
      for (let index = 0; index < block.nodes.length; index += 1) {
        const colour = stateColours[block.nodes[index].state] ?? '#f0f';
        if (colour !== current) {
          context.fillStyle = colour;
          current = colour;
        }
        context.fillRect(block.x + (index % block.cols) * cell, top + Math.floor(index / block.cols) * cell, inner, inner);
      }
    }
  }

  function hit(event) {
    const bounds = canvas.getBoundingClientRect();
    const x = (event.clientX - bounds.left) * (canvas.width / bounds.width);
    const y = (event.clientY - bounds.top) * (canvas.height / bounds.height);
    for (const block of racks) {
      if (x < block.x || x >= block.x + block.width || y < block.y || y >= block.y + block.height) continue;
      const top = block.y + (cell >= 6 ? labelHeight : 2);
      const col = Math.floor((x - block.x) / cell);
      const row = Math.floor((y - top) / cell);
      const index = row * block.cols + col;
      const node = y >= top && col < block.cols ? block.nodes[index] : undefined;
      return { site: block.site, rack: block.rack, node };
    }
    return null;
  }

  canvas.addEventListener('click', (event) => {
    const target = hit(event);
    if (target) onSelect(target.node ? { nodeId: target.node.nodeId, rack: target.rack } : { rack: target.rack });
  });
  canvas.addEventListener('mousemove', (event) => {
    const target = hit(event);
    onHover(target ? (target.node ? `${target.node.nodeId} (${target.rack}): ${target.node.state}` : `rack ${target.rack}`) : '');
  });

  return {
    /** Lays out and draws a new set of nodes. */
    setNodes(nodes) {
      layout(nodes);
      draw();
    },
    draw,
    /** The states of one rack's nodes, for a quick look (and the browser test). */
    rackStates(rack) {
      const block = racks.find((r) => r.rack === rack);
      return block ? block.nodes.map((n) => n.state) : [];
    },
  };
}
