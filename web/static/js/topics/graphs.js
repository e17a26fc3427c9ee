// Renderers of topic `graphs`'s view kinds (sims/graphs/topic.toml `views`), loaded by render.js's
// loadTopic("graphs") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, text } from "../draw.js";

// visit order as a heat map: early visits cool, late ones warm
const heat = (order, n) => `hsl(${210 - 170 * (order / Math.max(1, n - 1))}, 70%, 55%)`;

// where node i is drawn, fitting the coordinates into the area (aspect kept)
function placer(v, area) {
  const xs = v.xs || [];
  const ys = v.ys || [];
  const minX = Math.min(...xs);
  const minY = Math.min(...ys);
  const spanX = Math.max(1, Math.max(...xs) - minX);
  const spanY = Math.max(1, Math.max(...ys) - minY);
  const grid = v.layout === "grid";
  const cells = grid ? 1 : 0;
  const s = Math.min((area.w - 12) / (spanX + cells), (area.h - 12) / (spanY + cells));
  const ox = area.x + 6 + (grid ? s / 2 : 0);
  const oy = area.y + 6 + (grid ? s / 2 : 0);
  return { s, at: (i) => [ox + (xs[i] - minX) * s, oy + (ys[i] - minY) * s] };
}

function line(ctx, a, b, color, width) {
  ctx.strokeStyle = color;
  ctx.lineWidth = width;
  ctx.beginPath();
  ctx.moveTo(a[0], a[1]);
  ctx.lineTo(b[0], b[1]);
  ctx.stroke();
}

function polyline(ctx, nodes, at, color, width) {
  if (!nodes || nodes.length < 2) return;
  ctx.strokeStyle = color;
  ctx.lineWidth = width;
  ctx.beginPath();
  nodes.forEach((u, i) => (i ? ctx.lineTo(...at(u)) : ctx.moveTo(...at(u))));
  ctx.stroke();
}

function drawGraph(ctx, v, area, theme) {
  const n = v.n || 0;
  if (!n) return;
  const { s, at } = placer(v, area);
  const grid = v.layout === "grid";
  const visit = v.visit || [];
  const seen = visit.filter((x) => x >= 0).length;
  const frontier = new Set(v.frontier || []);
  if (grid) {
    const c = Math.max(1, s - 1);
    for (let i = 0; i < n; i++) {
      const [x, y] = at(i);
      ctx.fillStyle = visit[i] >= 0 ? heat(visit[i], seen) : theme.track;
      ctx.fillRect(x - c / 2, y - c / 2, c, c);
      if (frontier.has(i)) {
        ctx.strokeStyle = theme.good;
        ctx.lineWidth = 2;
        ctx.strokeRect(x - c / 2 + 1, y - c / 2 + 1, c - 2, c - 2);
      }
    }
  } else {
    (v.edges || []).forEach(([a, b]) => line(ctx, at(a), at(b), theme.muted, 0.5));
  }
  (v.tree || []).forEach(([a, b]) => line(ctx, at(a), at(b), theme.accent, 2.5));
  const parents = v.parents || [];
  parents.forEach((p, i) => p !== i && line(ctx, at(i), at(p), theme.accent, 1.5));
  polyline(ctx, v.path, at, theme.bad, Math.max(2, s / 4));
  polyline(ctx, v.cycle, at, theme.bad, 3);
  if (v.edge) line(ctx, at(v.edge[0]), at(v.edge[1]), theme.fg, 3);
  if (!grid) {
    const r = Math.max(2.5, Math.min(7, s * 40));
    for (let i = 0; i < n; i++) {
      const [x, y] = at(i);
      ctx.fillStyle = visit[i] >= 0 ? heat(visit[i], seen) : theme.track;
      ctx.beginPath();
      ctx.arc(x, y, r, 0, 2 * Math.PI);
      ctx.fill();
      if (frontier.has(i)) {
        ctx.strokeStyle = theme.good;
        ctx.lineWidth = 2;
        ctx.stroke();
      }
      if ((v.names || []).length && n <= 30) text(ctx, v.names[i], x + r + 2, y - r, theme.muted);
    }
  }
  for (const [i, label] of [
    [v.source, "S"],
    [v.target, "T"],
  ]) {
    if (i === undefined || i < 0) continue;
    const [x, y] = at(i);
    text(ctx, label, x, y, theme.fg, "center");
  }
}

// an all-pairs matrix: darker = shorter, blank = no path yet; round k's row and column outlined
function drawMatrix(ctx, v, area, theme) {
  const m = v.matrix || [];
  const n = m.length;
  if (!n) return;
  const c = Math.max(2, Math.min((area.w - 8) / n, (area.h - 8) / n));
  const x0 = area.x + 4;
  const y0 = area.y + 4;
  let hi = 1;
  m.forEach((row) => row.forEach((d) => d !== null && Math.abs(d) > hi && (hi = Math.abs(d))));
  m.forEach((row, i) =>
    row.forEach((d, j) => {
      ctx.fillStyle = d === null ? theme.track : `hsl(210, 60%, ${30 + 50 * (Math.abs(d) / hi)}%)`;
      ctx.fillRect(x0 + j * c, y0 + i * c, c - 1, c - 1);
    }),
  );
  if (v.edge) {
    ctx.strokeStyle = theme.fg;
    ctx.lineWidth = 2;
    ctx.strokeRect(x0 + v.edge[1] * c, y0 + v.edge[0] * c, c - 1, c - 1);
  }
  if (v.k >= 0 && v.k < n) {
    ctx.strokeStyle = theme.bad;
    ctx.lineWidth = 1;
    ctx.strokeRect(x0, y0 + v.k * c, n * c, c);
    ctx.strokeRect(x0 + v.k * c, y0, c, n * c);
  }
}

function drawCode(ctx, v, area, theme) {
  const lines = v.pseudocode || [];
  const h = Math.min(15, (area.h - 4) / Math.max(1, lines.length));
  ctx.save();
  ctx.font = `${Math.max(9, Math.min(11, h - 3))}px ui-monospace, monospace`;
  lines.forEach((s, i) => {
    const y = area.y + i * h + h / 2;
    if (i === v.line) {
      ctx.fillStyle = theme.track;
      ctx.fillRect(area.x, y - h / 2, area.w, h);
    }
    const max = Math.floor(area.w / 6.2);
    text(ctx, s.length > max ? `${s.slice(0, max - 1)}…` : s, area.x + 2, y, i === v.line ? theme.fg : theme.muted);
  });
  ctx.restore();
}

// graph: the same graph in every panel (visit order as heat, the frontier outlined, the current
// edge, the path or tree); the pseudocode with the line that ran highlighted; the step's sentence
registerRenderer("graph", (ctx, v, box, theme) => {
  const foot = 16;
  const wide = box.w >= 480 && (v.pseudocode || []).length;
  const codeW = wide ? Math.min(300, box.w * 0.42) : 0;
  const area = { x: PAD, y: 14, w: box.w - 2 * PAD - codeW, h: box.h - 14 - foot };
  const status = v.done ? "done" : `${v.frontier_kind || "step"} ${fmt((v.frontier || []).length)}`;
  text(ctx, `${v.algorithm || ""} · step ${fmt(v.steps || 0)} · ${status}`, PAD, 7, theme.fg);
  if (v.matrix) {
    const half = { ...area, w: area.w / 2 };
    drawGraph(ctx, v, half, theme);
    drawMatrix(ctx, v, { ...area, x: area.x + area.w / 2, w: area.w / 2 }, theme);
  } else {
    drawGraph(ctx, v, area, theme);
  }
  if (wide) drawCode(ctx, v, { x: box.w - PAD - codeW, y: 14, w: codeW, h: box.h - 14 - foot }, theme);
  const say = v.narration || "";
  const max = Math.floor((box.w - 2 * PAD) / 6.5);
  text(ctx, say.length > max ? `${say.slice(0, max - 1)}…` : say, PAD, box.h - foot / 2, theme.fg);
});
