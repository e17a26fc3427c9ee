// Renderers of topic `consensus`'s view kinds (sims/consensus/topic.toml `views`), loaded by
// render.js's loadTopic("consensus") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, fitText, text } from "../draw.js";
import { nodeTargets } from "../faults.js";

// A term's colour: one palette entry per term, so entries and nodes of one term match.
const termColour = (term, theme) => theme.palette[term % theme.palette.length];

// consensus: the servers on a circle (role, term, vote; crossed out when crashed), messages in
// flight as dots on their arrow, the partition as a dashed line between the sides, and below,
// each server's log side by side with its commit index marked. The reader draws faults on the
// servers (faults.js: drag a line to partition, click to crash or restart). A traitor (a Byzantine
// server, PBFT) has a dashed red ring.
registerRenderer("consensus", (ctx, v, box, theme) => {
  const nodes = v.nodes || [];
  const n = nodes.length;
  if (!n) return;
  const unsafe = (v.violations || []).length ? 14 : 0; // a line at the bottom says what went wrong
  const ringH = Math.max(70, Math.min(box.h * 0.55, 220, box.h - 30 - unsafe - n * 14));
  const cx = box.w / 2;
  const cy = 14 + ringH / 2;
  const r = Math.max(20, ringH / 2 - 22);
  const pos = nodes.map((_, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
    return [cx + r * Math.cos(a), cy + r * Math.sin(a)];
  });
  const none = v.leader === null || v.leader === undefined;
  text(ctx, none ? "no leader" : `leader S${v.leader + 1}`, PAD, 12, none ? theme.bad : theme.fg);
  text(ctx, `${fmt(v.committed || 0)} committed`, box.w - PAD, 12, theme.muted, "right");
  // the partition: a dashed line between the centroid of each side and the rest
  if (v.partitioned) {
    const groups = [...new Set(nodes.map((nd) => nd.group))];
    ctx.save();
    ctx.setLineDash([5, 4]);
    ctx.strokeStyle = theme.bad;
    ctx.lineWidth = 2;
    groups.forEach((g) => {
      const mine = nodes.filter((nd) => nd.group === g);
      if (mine.length * 2 > n) return; // draw around the minority sides only
      let mx = 0;
      let my = 0;
      mine.forEach((nd) => {
        mx += pos[nd.id][0];
        my += pos[nd.id][1];
      });
      mx /= mine.length;
      my /= mine.length;
      const dx = mx - cx;
      const dy = my - cy;
      const len = Math.hypot(dx, dy) || 1;
      const px = cx + (dx / len) * r * 0.45;
      const py = cy + (dy / len) * r * 0.45;
      const L = r * 1.2;
      ctx.beginPath();
      ctx.moveTo(px - (dy / len) * L, py + (dx / len) * L);
      ctx.lineTo(px + (dy / len) * L, py - (dx / len) * L);
      ctx.stroke();
    });
    ctx.restore();
  }
  // messages in flight: a faint arrow from sender to receiver, a dot where the message is now
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
    ctx.fillStyle = m.type === "RV" || m.type === "RVR" ? theme.bad : termColour(m.term, theme);
    ctx.beginPath();
    ctx.arc(x0 + (x1 - x0) * f, y0 + (y1 - y0) * f, m.type.endsWith("R") ? 2 : 3, 0, 2 * Math.PI);
    ctx.fill();
  });
  // the servers
  const rad = Math.max(10, Math.min(18, r / 3));
  nodes.forEach((nd, i) => {
    const [x, y] = pos[i];
    ctx.fillStyle = nd.up ? (nd.role === "leader" ? termColour(nd.term, theme) : theme.track) : theme.muted;
    ctx.beginPath();
    ctx.arc(x, y, rad, 0, 2 * Math.PI);
    ctx.fill();
    ctx.lineWidth = nd.role === "candidate" ? 3 : 1;
    ctx.strokeStyle = nd.role === "candidate" ? theme.bad : theme.fg;
    ctx.stroke();
    if (nd.traitor) {
      // a Byzantine server (PBFT's traitors): a dashed ring around it
      ctx.save();
      ctx.setLineDash([3, 3]);
      ctx.lineWidth = 2;
      ctx.strokeStyle = theme.bad;
      ctx.beginPath();
      ctx.arc(x, y, rad + 4, 0, 2 * Math.PI);
      ctx.stroke();
      ctx.restore();
    }
    text(ctx, `S${nd.id + 1}`, x, y, nd.role === "leader" ? theme.onAccent || theme.fg : theme.fg, "center");
  });
  nodeTargets(
    ctx,
    nodes.map((nd, i) => ({ id: nd.id, up: nd.up, x: pos[i][0], y: pos[i][1] })),
    rad,
    theme,
  );
  // the logs: one row per server, newest entries on the right; committed entries solid
  const top = 14 + ringH + 10;
  const rowH = Math.max(10, Math.min(22, (box.h - top - 6 - unsafe) / n));
  if (rowH < 8 || top + rowH > box.h) return;
  let first = Infinity;
  let last = 0;
  nodes.forEach((nd) => {
    first = Math.min(first, nd.log_from);
    last = Math.max(last, nd.log_from + nd.log.length - 1);
  });
  const cols = Math.max(1, last - first + 1);
  // each row starts with its server's state (role, term, vote), as wide as the widest of them
  const states = nodes.map((nd) => {
    const vote = nd.vote === null || nd.vote === undefined ? "–" : `S${nd.vote + 1}`;
    return [
      `S${nd.id + 1} ${nd.up ? nd.role : "crashed"}${nd.traitor ? " traitor" : ""} t${nd.term} v${vote}`,
      `S${nd.id + 1} ${nd.up ? nd.role : "down"}`,
      `S${nd.id + 1}`,
    ];
  });
  const full = Math.max(...states.map((c) => ctx.measureText(c[0]).width));
  const pick = full <= box.w * 0.45 ? 0 : Math.max(...states.map((c) => ctx.measureText(c[1]).width)) <= box.w * 0.4 ? 1 : 2;
  const left = PAD + 8 + Math.max(...states.map((c) => ctx.measureText(c[pick]).width));
  const cw = Math.max(6, Math.min(26, (box.w - left - PAD) / cols));
  nodes.forEach((nd, i) => {
    const y = top + i * rowH;
    text(ctx, states[i][pick], PAD, y + rowH / 2, nd.up ? theme.fg : theme.bad);
    nd.log.forEach(([term], k) => {
      const index = nd.log_from + k;
      const x = left + (index - first) * cw;
      const committed = index <= nd.commit;
      ctx.fillStyle = termColour(term, theme);
      ctx.globalAlpha = committed ? 1 : 0.35;
      ctx.fillRect(x, y + 1, cw - 1, rowH - 3);
      ctx.globalAlpha = 1;
      if (cw >= 16 && rowH >= 13) text(ctx, String(term), x + cw / 2, y + rowH / 2, theme.fg, "center");
    });
    if (nd.commit >= first) {
      const x = left + (nd.commit - first + 1) * cw - 1;
      ctx.strokeStyle = theme.fg;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x, y);
      ctx.lineTo(x, y + rowH - 1);
      ctx.stroke();
    }
  });
  if (unsafe) fitText(ctx, [`unsafe: ${v.violations[0]}`, "unsafe"], PAD, box.h - 8, theme.bad, "left", box.w - 2 * PAD);
});
