// Renderers of topic `election`'s view kinds (sims/election/topic.toml `views`), loaded by
// render.js's loadTopic("election") when a preset of the topic is shown.
import { registerRenderer } from "../render.js";
import { PAD, fitText, text } from "../draw.js";

const WINDOW = 10; // seconds of leadership history the strip shows
const nodeColour = (id, theme) => theme.palette[id % theme.palette.length];
const name = (id) => `N${id + 1}`;

// The leaders of a history segment as a colour: one node's own colour, none a gap, two red.
function segColour(leaders, theme) {
  if (!leaders.length) return null;
  return leaders.length > 1 ? theme.bad : nodeColour(leaders[0], theme);
}

// election: the client nodes on a circle (the leader filled in its colour, a candidate outlined
// in red, a crashed node grey), the coordination service (lock service, ZooKeeper) in the middle
// when the policy has one, messages in flight as dots on their line; below, who led over the
// last ten seconds (red where two nodes led at once).
registerRenderer("election", (ctx, v, box, theme) => {
  const nodes = v.nodes || [];
  const n = v.n || 0;
  if (!n) return;
  const leaders = v.leaders || [];
  const headline =
    leaders.length === 0
      ? ["no leader"]
      : leaders.length === 1
        ? [`leader ${name(leaders[0])}`]
        : [`split brain: ${leaders.map(name).join(", ")} lead`, `${leaders.length} leaders`];
  fitText(ctx, headline, PAD, 12, leaders.length === 1 ? theme.fg : theme.bad, "left", box.w - 2 * PAD);
  const stripH = 16;
  const stripTop = box.h - stripH - 18;
  const ringH = Math.max(60, stripTop - 30);
  const cx = box.w / 2;
  const cy = 24 + ringH / 2;
  const r = Math.max(18, Math.min(ringH / 2 - 14, box.w / 2 - 24));
  const pos = [];
  for (let i = 0; i < n; i += 1) {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
    pos.push([cx + r * Math.cos(a), cy + r * Math.sin(a)]);
  }
  if (nodes.length > n) pos.push([cx, cy]); // the service
  // messages in flight: a faint line from sender to receiver, a dot where the message is now
  (v.messages || []).forEach((m) => {
    const [x0, y0] = pos[m.src] || [cx, cy];
    const [x1, y1] = pos[m.dst] || [cx, cy];
    const span = m.arrives - m.sent;
    const f = span > 0 ? Math.max(0, Math.min(1, (v.t - m.sent) / span)) : 1;
    ctx.strokeStyle = theme.track;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x1, y1);
    ctx.stroke();
    ctx.fillStyle = ["HEARTBEAT", "PING", "PONG", "AE", "AER", "RENEW", "RENEWED"].includes(m.type) ? theme.muted : theme.bad;
    ctx.beginPath();
    ctx.arc(x0 + (x1 - x0) * f, y0 + (y1 - y0) * f, 2.5, 0, 2 * Math.PI);
    ctx.fill();
  });
  // the side most client nodes are on; a node elsewhere is drawn cut off (dashed red)
  const sizes = {};
  nodes.slice(0, n).forEach((nd) => {
    sizes[nd.group] = (sizes[nd.group] || 0) + 1;
  });
  const main = Number(Object.keys(sizes).sort((a, b) => sizes[b] - sizes[a] || a - b)[0]);
  const rad = Math.max(5, Math.min(16, (Math.PI * r) / n - 2));
  ctx.font = `11px ${theme.font}`;
  nodes.forEach((nd, i) => {
    const [x, y] = pos[i];
    const service = nd.role === "service";
    const lead = nd.up && nd.role === "leader";
    ctx.fillStyle = !nd.up ? theme.muted : lead ? nodeColour(nd.id, theme) : service ? theme.accent : theme.track;
    ctx.beginPath();
    if (service) ctx.rect(x - rad, y - rad * 0.7, 2 * rad, 1.4 * rad);
    else ctx.arc(x, y, rad, 0, 2 * Math.PI);
    ctx.fill();
    ctx.lineWidth = nd.role === "candidate" ? 3 : 1;
    const cut = nd.group !== main;
    ctx.strokeStyle = nd.role === "candidate" || cut ? theme.bad : theme.fg;
    if (cut) ctx.setLineDash([3, 2]); // cut off from where most client nodes are
    ctx.stroke();
    ctx.setLineDash([]);
    if (!nd.up) {
      ctx.strokeStyle = theme.bad;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x - rad * 0.7, y - rad * 0.7);
      ctx.lineTo(x + rad * 0.7, y + rad * 0.7);
      ctx.moveTo(x + rad * 0.7, y - rad * 0.7);
      ctx.lineTo(x - rad * 0.7, y + rad * 0.7);
      ctx.stroke();
    }
    const label = service ? "svc" : name(nd.id);
    if (ctx.measureText(label).width <= 2 * rad - 2) text(ctx, label, x, y + 4, theme.fg, "center");
  });
  // who led, over the last WINDOW seconds
  const x0 = PAD;
  const x1 = box.w - PAD;
  const t1 = v.t;
  const t0 = Math.max(0, t1 - WINDOW);
  const span = Math.max(1e-9, t1 - t0);
  const X = (t) => x0 + ((Math.max(t0, t) - t0) / span) * (x1 - x0);
  ctx.fillStyle = theme.track;
  ctx.fillRect(x0, stripTop, x1 - x0, stripH);
  const hist = v.history || [];
  hist.forEach(([since, who], k) => {
    const until = k + 1 < hist.length ? hist[k + 1][0] : t1;
    if (until < t0) return;
    const colour = segColour(who, theme);
    if (!colour) return;
    ctx.fillStyle = colour;
    ctx.fillRect(X(since), stripTop, Math.max(1, X(until) - X(since)), stripH);
  });
  fitText(ctx, [`who led, last ${WINDOW} s (red: two at once)`, "who led"], PAD, box.h - 5, theme.muted, "left", box.w - 2 * PAD);
});
