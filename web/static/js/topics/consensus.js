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
  if (v.protocol === "commit") return drawCommit(ctx, v, box, theme); // atomic commit: below
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

// Atomic commit (sims/consensus/commit_panel.py; a consensus view with protocol "commit"): the
// coordinator S1 and the participants on a circle, messages in flight, the partition; below, one
// row per server and one column per recent transaction, coloured by where it stands there.
const TXN_STATE = {
  working: ["W", "working"],
  voting: ["V", "voting"],
  prepared: ["P", "prepared"],
  blocked: ["B", "blocked"],
  precommitted: ["PC", "pre-committed"],
  committed: ["C", "committed"],
  aborted: ["A", "aborted"],
};

function txnFill(state, theme) {
  if (state === "committed") return [theme.good, 1];
  if (state === "aborted") return [theme.muted, 0.6];
  if (state === "blocked") return [theme.bad, 1];
  if (state === "precommitted") return [theme.accent, 1];
  if (state === "prepared") return [theme.accent, 0.5];
  return [theme.track, 1];
}

function drawCut(ctx, nodes, pos, cx, cy, r, theme) {
  const n = nodes.length;
  ctx.save();
  ctx.setLineDash([5, 4]);
  ctx.strokeStyle = theme.bad;
  ctx.lineWidth = 2;
  [...new Set(nodes.map((nd) => nd.group))].forEach((g) => {
    const mine = nodes.filter((nd) => nd.group === g);
    if (mine.length * 2 > n) return;
    let mx = 0;
    let my = 0;
    mine.forEach((nd) => {
      mx += pos[nd.id][0] / mine.length;
      my += pos[nd.id][1] / mine.length;
    });
    const len = Math.hypot(mx - cx, my - cy) || 1;
    const [ux, uy] = [(mx - cx) / len, (my - cy) / len];
    const [px, py] = [cx + ux * r * 0.45, cy + uy * r * 0.45];
    ctx.beginPath();
    ctx.moveTo(px - uy * r * 1.2, py + ux * r * 1.2);
    ctx.lineTo(px + uy * r * 1.2, py - ux * r * 1.2);
    ctx.stroke();
  });
  ctx.restore();
}

function drawCommit(ctx, v, box, theme) {
  const nodes = v.nodes || [];
  const n = nodes.length;
  if (!n) return;
  const txns = v.txns || [];
  const unsafe = (v.violations || []).length ? 14 : 0;
  const legendH = 14;
  const headH = 12;
  const ringH = Math.max(70, Math.min(box.h * 0.5, 200, box.h - 30 - unsafe - legendH - headH - n * 12));
  const cx = box.w / 2;
  const cy = 14 + ringH / 2;
  const r = Math.max(20, ringH / 2 - 18);
  const pos = nodes.map((_, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
    return [cx + r * Math.cos(a), cy + r * Math.sin(a)];
  });
  const half = box.w / 2 - PAD - 4;
  const down = nodes[0] && !nodes[0].up;
  fitText(ctx, down ? ["coordinator down", "S1 down"] : ["coordinator up", "S1 up"], PAD, 12, down ? theme.bad : theme.fg, "left", half);
  const tally = [
    `${fmt(v.committed || 0)} committed, ${fmt(v.aborted || 0)} aborted`,
    `${fmt(v.committed || 0)} C, ${fmt(v.aborted || 0)} A`,
  ];
  fitText(ctx, tally, box.w - PAD, 12, theme.muted, "right", half);
  if (v.partitioned) drawCut(ctx, nodes, pos, cx, cy, r, theme);
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
    ctx.fillStyle = m.type === "ASK" ? theme.bad : m.type === "DEC" ? theme.good : theme.accent;
    ctx.beginPath();
    ctx.arc(x0 + (x1 - x0) * f, y0 + (y1 - y0) * f, m.src === 0 ? 3 : 2, 0, 2 * Math.PI);
    ctx.fill();
  });
  const rad = Math.max(10, Math.min(18, r / 3));
  nodes.forEach((nd, i) => {
    const [x, y] = pos[i];
    ctx.fillStyle = nd.up ? (nd.role === "coordinator" ? theme.accent : theme.track) : theme.muted;
    ctx.beginPath();
    ctx.arc(x, y, rad, 0, 2 * Math.PI);
    ctx.fill();
    ctx.lineWidth = 1;
    ctx.strokeStyle = theme.fg;
    ctx.stroke();
    text(ctx, `S${nd.id + 1}`, x, y, nd.role === "coordinator" && nd.up ? theme.onAccent || theme.fg : theme.fg, "center");
  });
  nodeTargets(
    ctx,
    nodes.map((nd, i) => ({ id: nd.id, up: nd.up, x: pos[i][0], y: pos[i][1] })),
    rad,
    theme,
  );
  // the legend, and what went wrong, at the bottom
  const legend = [
    "P prepared (locks held), B blocked, PC pre-committed, C committed, A aborted",
    "P prepared, B blocked, PC pre-committed, C commit, A abort",
    "B blocked, C commit, A abort",
  ];
  fitText(ctx, legend, PAD, box.h - 8 - unsafe, theme.muted, "left", box.w - 2 * PAD);
  if (unsafe) {
    const first = v.violations[0].replace("atomicity:", "transaction #");
    fitText(
      ctx,
      [`not atomic: ${first} committed here, aborted there`, `not atomic: ${first}`, "not atomic"],
      PAD,
      box.h - 8,
      theme.bad,
      "left",
      box.w - 2 * PAD,
    );
  }
  // the transactions: one row per server, one column per transaction (the latest on the right)
  const top = 14 + ringH + 8;
  const rowH = Math.max(8, Math.min(20, (box.h - top - headH - legendH - unsafe - 4) / n));
  if (!txns.length || rowH < 8 || top + headH + n * rowH > box.h - legendH - unsafe) return;
  const names = nodes.map((nd) => {
    const s = `S${nd.id + 1}`;
    return nd.up ? [nd.role === "coordinator" ? `${s} coordinator` : `${s} participant`, s] : [`${s} down`, s];
  });
  const widest = (k) => Math.max(...names.map((c) => ctx.measureText(c[k]).width));
  const pick = widest(0) <= box.w * 0.3 ? 0 : 1;
  const left = PAD + 8 + widest(pick);
  const cw = Math.max(4, Math.min(34, (box.w - left - PAD) / txns.length));
  const ids = txns.map((id) => `#${id}`);
  if (Math.max(...ids.map((s) => ctx.measureText(s).width)) + 4 <= cw)
    ids.forEach((s, k) => text(ctx, s, left + k * cw + cw / 2, top + headH / 2, theme.muted, "center"));
  nodes.forEach((nd, i) => {
    const y = top + headH + i * rowH;
    text(ctx, names[i][pick], PAD, y + rowH / 2, nd.up ? theme.fg : theme.bad);
    (nd.states || []).forEach((state, k) => {
      if (!state) return;
      const x = left + k * cw;
      const [fill, alpha] = txnFill(state, theme);
      ctx.fillStyle = fill;
      ctx.globalAlpha = alpha;
      ctx.fillRect(x, y + 1, cw - 1, rowH - 3);
      ctx.globalAlpha = 1;
      const letter = (TXN_STATE[state] || ["?"])[0];
      if (rowH >= 12 && ctx.measureText(letter).width + 2 <= cw - 1)
        text(ctx, letter, x + cw / 2, y + rowH / 2, alpha === 1 && fill !== theme.track ? theme.onAccent || theme.fg : theme.fg, "center");
    });
  });
}
