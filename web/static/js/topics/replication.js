// Renderers of topic `replication`'s view kinds (sims/replication/topic.toml `views`), loaded by
// render.js's loadTopic("replication") when a preset of the topic is shown.
import { registerRenderer } from "../render.js";
import { PAD, text } from "../draw.js";
import { nodeTargets } from "../faults.js";

// Where node i of n sits: on a circle, node 0 at the top, clockwise.
function place(i, n, box, top) {
  const cx = box.w / 2;
  const cy = top + (box.h - top) / 2 - 6;
  const r = Math.max(20, Math.min(box.w / 2 - 60, (box.h - top) / 2 - 34));
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

// replication: the nodes on a circle with their role, epoch or chain position and register
// values (key=write id), messages in flight as dots along their links, the partition as a line
registerRenderer("replication", (ctx, v, box, theme) => {
  const nodes = v.nodes || [];
  if (!nodes.length) return;
  const top = 20;
  const pos = nodes.map((_, i) => place(i, nodes.length, box, top));
  text(ctx, headline(v), PAD, 12, theme.fg);
  const flying = v.messages || [];
  text(ctx, `${flying.length} in flight`, box.w - PAD, 12, theme.muted, "right");

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
    text(ctx, `n${nd.id}`, x, y + 4, nd.up ? theme.onAccent || "#fff" : theme.muted, "center");
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
    const below = y + r + 12;
    const role = nd.up ? nd.role : "down";
    const extra = nd.epoch !== undefined ? ` e${nd.epoch}` : nd.hints ? ` ${nd.hints} hints` : "";
    text(ctx, `${role}${extra} · ${nd.held} held`, x, below, theme.fg, "center");
    // key=write id, with the version where it is a log index or sequence number (key=id@version)
    const vals = (nd.values || []).map(([key, wid, ver]) => `k${key}=${wid}${typeof ver === "number" ? `@${ver}` : ""}`).join(" ");
    if (vals) text(ctx, vals, x, below + 12, theme.muted, "center");
  });
  nodeTargets(
    ctx,
    nodes.map((nd, i) => ({ id: nd.id, up: nd.up, ...pos[i] })),
    r,
    theme,
  );
});
