// Renderers of topic `replication`'s view kinds (sims/replication/topic.toml `views`), loaded by
// render.js's loadTopic("replication") when a preset of the topic is shown.
import { registerRenderer } from "../render.js";
import { PAD, fitText, text } from "../draw.js";
import { nodeTargets } from "../faults.js";

// Where node i of n sits: on a circle between y = top and y = bottom, node 0 at the top, clockwise.
function place(i, n, box, top, bottom) {
  const cx = box.w / 2;
  const cy = (top + bottom) / 2;
  const r = Math.max(16, Math.min(box.w / 2 - 40, (bottom - top) / 2 - 16));
  const a = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(1, n);
  return { x: cx + r * Math.cos(a), y: cy + r * Math.sin(a) };
}

// A message's colour: client traffic and acknowledgements muted, replication in the accent.
function msgColour(kind, theme) {
  if (kind === "done" || kind === "ack" || kind === "clr") return theme.good;
  if (kind === "fwd" || kind === "get" || kind === "val") return theme.muted;
  if (kind === "snap" || kind === "hello" || kind === "need") return theme.bad;
  return theme.accent;
}

// The partition as a dashed line between the first group and the rest: through the midpoint of
// their centroids, perpendicular to the segment that joins them.
function partitionLine(ctx, nodes, pos, box, theme) {
  const first = nodes[0].group;
  const a = { x: 0, y: 0, n: 0 };
  const b = { x: 0, y: 0, n: 0 };
  nodes.forEach((nd, i) => {
    const c = nd.group === first ? a : b;
    c.x += pos[i].x;
    c.y += pos[i].y;
    c.n += 1;
  });
  if (!a.n || !b.n) return;
  const ax = a.x / a.n;
  const ay = a.y / a.n;
  const bx = b.x / b.n;
  const by = b.y / b.n;
  const mx = (ax + bx) / 2;
  const my = (ay + by) / 2;
  let dx = -(by - ay);
  let dy = bx - ax;
  const len = Math.hypot(dx, dy) || 1;
  const reach = Math.max(box.w, box.h);
  dx = (dx / len) * reach;
  dy = (dy / len) * reach;
  ctx.save();
  ctx.strokeStyle = theme.bad;
  ctx.lineWidth = 2;
  ctx.setLineDash([6, 4]);
  ctx.beginPath();
  ctx.moveTo(mx - dx, my - dy);
  ctx.lineTo(mx + dx, my + dy);
  ctx.stroke();
  ctx.restore();
}

function headline(v) {
  const m = v.monitor || {};
  if (m.chain) return `chain ${m.chain.join(" → ")}`;
  if (m.leader !== undefined) return `leader n${m.leader} · epoch ${m.epoch}`;
  return "any node coordinates";
}

// replication: the nodes on a circle (the leader or head in the accent, the tail green, a node
// that is down crossed out), messages in flight as dots along their links, the partition as a
// line; under the circle one row per node: its role, epoch or hints, how many writes it holds,
// and its register (key=write id, with the version where it is a log index or sequence number)
registerRenderer("replication", (ctx, v, box, theme) => {
  const nodes = v.nodes || [];
  if (!nodes.length) return;
  const rowH = 14;
  const table = box.h - nodes.length * rowH - 4;
  const pos = nodes.map((_, i) => place(i, nodes.length, box, 20, table));
  const flying = v.messages || [];
  const count = `${flying.length} in flight`;
  const cw = ctx.measureText(count).width;
  text(ctx, count, box.w - PAD, 9, theme.muted, "right");
  fitText(ctx, [headline(v), headline(v).replace(" · epoch ", " e")], PAD, 9, theme.fg, "left", box.w - 2 * PAD - cw - 8);

  ctx.strokeStyle = theme.track;
  ctx.lineWidth = 1;
  for (let i = 0; i < nodes.length; i++) {
    for (let j = i + 1; j < nodes.length; j++) {
      ctx.beginPath();
      ctx.moveTo(pos[i].x, pos[i].y);
      ctx.lineTo(pos[j].x, pos[j].y);
      ctx.stroke();
    }
  }
  if (v.partitioned) partitionLine(ctx, nodes, pos, box, theme);

  for (const [src, dst, sent, arrives, kind] of flying) {
    const a = pos[src];
    const b = pos[dst];
    if (!a || !b) continue;
    const f = arrives > sent ? Math.max(0, Math.min(1, (v.t - sent) / (arrives - sent))) : 1;
    ctx.fillStyle = msgColour(kind, theme);
    ctx.beginPath();
    ctx.arc(a.x + (b.x - a.x) * f, a.y + (b.y - a.y) * f, 2.5, 0, 2 * Math.PI);
    ctx.fill();
  }

  const r = 14;
  nodes.forEach((nd, i) => {
    const { x, y } = pos[i];
    const lead = nd.role === "leader" || nd.role === "head" || nd.role === "head+tail";
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.fillStyle = !nd.up ? theme.track : lead ? theme.accent : nd.role === "tail" ? theme.good : theme.muted;
    ctx.fill();
    text(ctx, `n${nd.id}`, x, y, nd.up ? theme.onAccent || "#fff" : theme.muted, "center");
    if (!nd.up) {
      ctx.strokeStyle = theme.bad;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x - r, y - r);
      ctx.lineTo(x + r, y + r);
      ctx.moveTo(x + r, y - r);
      ctx.lineTo(x - r, y + r);
      ctx.stroke();
    }
  });
  // the rows: each node's state in a column as wide as the widest, then as much of its register as fits
  const states = nodes.map((nd) => {
    const extra = nd.epoch !== undefined ? ` e${nd.epoch}` : nd.hints ? ` ${nd.hints} hints` : "";
    return `n${nd.id} ${nd.up ? nd.role : "down"}${extra} · ${nd.held} held`;
  });
  const col = PAD + 10 + Math.max(...states.map((st) => ctx.measureText(st).width));
  nodes.forEach((nd, i) => {
    const y = table + 4 + i * rowH + rowH / 2;
    text(ctx, states[i], PAD, y, nd.up ? theme.fg : theme.bad);
    const vals = (nd.values || []).map(([key, wid, ver]) => `k${key}=${wid}${typeof ver === "number" ? `@${ver}` : ""}`);
    const fits = vals.map((_, k) => vals.slice(0, vals.length - k).join(" ") + (k ? " …" : ""));
    fitText(ctx, fits, col, y, theme.muted, "left", box.w - PAD - col);
  });
  nodeTargets(
    ctx,
    nodes.map((nd, i) => ({ id: nd.id, up: nd.up, ...pos[i] })),
    r,
    theme,
  );
});
