// Renderers of topic `trees`'s view kinds (sims/trees/topic.toml `views`), loaded by render.js's
// loadTopic("trees") when a preset of the topic is shown. One view kind, `tree`, in three shapes
// the panels lay out themselves (sims/trees/*.py `layout`):
//   nodes  — [x, depth, label, style]: binary trees (style "red"), the heap, the trie ("end");
//   pages  — [x0, x1, depth, keys, style]: B-tree and B+ tree pages, leaves chained when `linked`;
//   ranges — [x0, x1, depth, label, style]: the Fenwick and segment trees' sums over the array.
// x is a fraction of the width; `parents` gives each node's parent (-1: none drawn), `path` the
// nodes the operation in hand has visited, in order (the last is where it is now).
import { registerRenderer, fmt } from "../render.js";
import { text } from "../draw.js";
import { stepFrame } from "../stepframe.js";

const CHAR = 6; // px a character of the 10 px label font, about

// a label centred on x where it fits in `room` px, else nothing (labels never overlap); `knock`
// clears the lines behind it first
function fitted(ctx, s, x, y, room, color, knock = false) {
  if (s.length * CHAR > room - 2) return;
  if (knock) ctx.clearRect(x - (s.length * CHAR) / 2 - 1, y - 6, s.length * CHAR + 2, 12);
  text(ctx, s, x, y, color, "center");
}

// for each node, the room its label has: the distance to its nearest neighbours on its level
function rooms(xs, levels) {
  const room = new Array(xs.length).fill(Infinity);
  const byLevel = new Map();
  xs.forEach((x, i) => {
    if (!byLevel.has(levels[i])) byLevel.set(levels[i], []);
    byLevel.get(levels[i]).push(i);
  });
  for (const idx of byLevel.values()) {
    idx.sort((a, b) => xs[a] - xs[b]);
    for (let k = 0; k < idx.length; k++) {
      const left = k ? xs[idx[k]] - xs[idx[k - 1]] : Infinity;
      const right = k + 1 < idx.length ? xs[idx[k + 1]] - xs[idx[k]] : Infinity;
      room[idx[k]] = Math.min(left, right);
    }
  }
  return room;
}

function line(ctx, a, b, color, width) {
  ctx.strokeStyle = color;
  ctx.lineWidth = width;
  ctx.beginPath();
  ctx.moveTo(a[0], a[1]);
  ctx.lineTo(b[0], b[1]);
  ctx.stroke();
}

// the vertical layout: one row a level, at most 70 px apart
function rows(area, levels) {
  const n = Math.max(1, levels);
  const h = Math.min(70, area.h / n);
  return { h, y: (d) => area.y + h * (d + 0.5) };
}

// a node's fill by its style: red-black colours; a trie node that ends no key is hollow
const FILLS = { red: "bad", black: "fg", mid: "track" };

// nodes: circles joined to their parents
function drawNodes(ctx, v, area, theme) {
  const nodes = v.nodes || [];
  const depth = nodes.reduce((m, n) => Math.max(m, n[1]), 0);
  const row = rows(area, depth + 1);
  const xs = nodes.map((n) => area.x + n[0] * area.w);
  const at = (i) => [xs[i], row.y(nodes[i][1])];
  const room = rooms(
    xs,
    nodes.map((n) => n[1]),
  );
  const r = Math.max(1.5, Math.min(9, row.h / 3, ...room.map((w) => w / 2.2)));
  const edge = (x) => 2 * Math.min(x - area.x, area.x + area.w - x) + 4;
  const onPath = new Set(v.path || []);
  const parents = v.parents || [];
  parents.forEach((p, i) => {
    if (p >= 0)
      line(ctx, at(p), at(i), onPath.has(i) && onPath.has(p) ? theme.good : theme.muted, onPath.has(i) && onPath.has(p) ? 2.5 : 1);
  });
  ctx.font = "10px ui-monospace, monospace";
  const last = (v.path || []).at(-1);
  nodes.forEach((n, i) => {
    const [x, y] = at(i);
    const fill = FILLS[n[3]] ? theme[FILLS[n[3]]] : theme.accent;
    ctx.fillStyle = fill;
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.fill();
    if (onPath.has(i) || n[3] === "mid") {
      ctx.strokeStyle = onPath.has(i) ? theme.good : theme.muted;
      ctx.lineWidth = i === last ? 3 : 1.5;
      ctx.stroke();
    }
    const s = String(n[2]);
    if (r >= 6 && s.length * CHAR <= 2 * r + 2) fitted(ctx, s, x, y + 0.5, 2 * r + 4, fill === theme.track ? theme.fg : theme.onAccent);
    // under the node: room up to its neighbours on the level, and inside the area
    else if (row.h >= 24) fitted(ctx, s, x, y + r + 7, Math.min(room[i], edge(x)), theme.muted, true);
  });
}

// pages: a box of keys a page, each level a row; the leaves' chain drawn between them
function drawPages(ctx, v, area, theme) {
  const nodes = v.nodes || [];
  const depth = nodes.reduce((m, n) => Math.max(m, n[2]), 0);
  const row = rows(area, depth + 1);
  const bh = Math.min(20, row.h * 0.5);
  const onPath = new Set(v.path || []);
  const last = (v.path || []).at(-1);
  ctx.font = "10px ui-monospace, monospace";
  const boxes = nodes.map((n) => {
    const span = (n[1] - n[0]) * area.w;
    const keys = n[3];
    const want = keys.join(" ").length * CHAR + 6;
    const w = Math.max(2, Math.min(span - 2, want));
    const cx = area.x + ((n[0] + n[1]) / 2) * area.w;
    return { x: cx - w / 2, y: row.y(n[2]) - bh / 2, w, h: bh, cx };
  });
  (v.parents || []).forEach((p, i) => {
    if (p < 0) return;
    const hot = onPath.has(i) && onPath.has(p);
    line(ctx, [boxes[p].cx, boxes[p].y + bh], [boxes[i].cx, boxes[i].y], hot ? theme.good : theme.muted, hot ? 2.5 : 1);
  });
  if (v.linked) {
    // the B+ tree's chain of leaves, under them: each leaf to the next
    const leaves = nodes.map((n, i) => i).filter((i) => nodes[i][4] === "leaf");
    leaves.sort((a, b) => nodes[a][0] - nodes[b][0]);
    for (let k = 0; k + 1 < leaves.length; k++) {
      const a = boxes[leaves[k]];
      const b = boxes[leaves[k + 1]];
      const hot = onPath.has(leaves[k]) && onPath.has(leaves[k + 1]);
      const y = a.y + bh + 4;
      line(ctx, [a.cx, a.y + bh], [a.cx, y], theme.accent, 1);
      line(ctx, [a.cx, y], [b.cx, y], hot ? theme.good : theme.accent, hot ? 3 : 1);
    }
  }
  boxes.forEach((b, i) => {
    ctx.fillStyle = theme.track;
    ctx.fillRect(b.x, b.y, b.w, b.h);
    ctx.strokeStyle = onPath.has(i) ? theme.good : theme.muted;
    ctx.lineWidth = i === last ? 3 : onPath.has(i) ? 2 : 1;
    ctx.strokeRect(b.x, b.y, b.w, b.h);
    const s = nodes[i][3].join(" ");
    if (s.length * CHAR <= b.w - 4) text(ctx, s, b.cx, b.y + b.h / 2 + 0.5, theme.fg, "center");
  });
}

// ranges: each node a bar over the slots it sums, its sum inside; the array itself along the bottom
function drawRanges(ctx, v, area, theme) {
  const nodes = v.nodes || [];
  const arr = v.array || [];
  const depth = nodes.reduce((m, n) => Math.max(m, n[2]), 0);
  const below = arr.length ? Math.min(18, area.h / (depth + 3)) : 0;
  const row = rows({ ...area, h: area.h - below - (below ? 4 : 0) }, depth + 1);
  const bh = Math.max(2, Math.min(16, row.h - 3));
  const onPath = new Set(v.path || []);
  const last = (v.path || []).at(-1);
  ctx.font = "10px ui-monospace, monospace";
  nodes.forEach((n, i) => {
    const x = area.x + n[0] * area.w;
    const w = Math.max(1, (n[1] - n[0]) * area.w - 1);
    const y = row.y(n[2]) - bh / 2;
    ctx.fillStyle = onPath.has(i) ? theme.good : theme.track;
    ctx.fillRect(x, y, w, bh);
    if (i === last) {
      ctx.strokeStyle = theme.fg;
      ctx.lineWidth = 2;
      ctx.strokeRect(x, y, w, bh);
    }
    if (bh >= 10) fitted(ctx, String(n[3]), x + w / 2, y + bh / 2 + 0.5, w, theme.fg);
  });
  if (arr.length) {
    const w = area.w / arr.length;
    const y = area.y + area.h - below;
    arr.forEach((a, i) => {
      ctx.fillStyle = a ? theme.accent : theme.track;
      ctx.fillRect(area.x + i * w, y, Math.max(0.5, w - 1), below);
      if (w >= 12) fitted(ctx, String(a), area.x + i * w + w / 2, y + below / 2 + 0.5, w, a ? theme.onAccent : theme.muted);
    });
  }
}

const SHAPES = { nodes: drawNodes, pages: drawPages, ranges: drawRanges };

// tree: the structure (its nodes, pages or ranges), the nodes the operation has visited outlined
// in green and the one it is at drawn thickest, in the frame every stepping panel shares
registerRenderer("tree", (ctx, v, box, theme) => {
  let status = v.op || "no operation yet";
  if (v.height !== undefined) status += ` · height ${fmt(v.height)}`;
  if (v.bound) status += ` ≤ ${fmt(v.bound)}`;
  if (v.done) status = `done · ${fmt(v.ops || 0)} ops · height ${fmt(v.height || 0)}`;
  const frame = stepFrame(ctx, v, box, theme, status);
  const hidden = v.hidden ? 12 : 0;
  const area = { ...frame, y: frame.y + 4, h: frame.h - 4 - hidden };
  if (area.w < 20 || area.h < 20 || !(v.nodes || []).length) return;
  (SHAPES[v.shape] || drawNodes)(ctx, v, area, theme);
  if (hidden) {
    ctx.font = "10px ui-monospace, monospace";
    text(ctx, `+ ${fmt(v.hidden)} more below, not drawn`, area.x, area.y + area.h + hidden / 2, theme.muted);
  }
});
