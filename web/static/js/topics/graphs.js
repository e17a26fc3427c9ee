// Renderers of topic `graphs`'s view kinds (sims/graphs/topic.toml `views`), loaded by render.js's
// loadTopic("graphs") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { LabelSpace, text } from "../draw.js";
import { stepFrame } from "../stepframe.js";

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

// an arrowhead at b, on the line from a, stopping `back` px short of b (a node's radius)
function arrowhead(ctx, a, b, back, color) {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const len = Math.hypot(dx, dy);
  if (len < 2 * back + 6) return;
  const ux = dx / len;
  const uy = dy / len;
  const tip = [b[0] - ux * back, b[1] - uy * back];
  ctx.fillStyle = color;
  ctx.beginPath();
  ctx.moveTo(tip[0], tip[1]);
  ctx.lineTo(tip[0] - ux * 7 - uy * 3.5, tip[1] - uy * 7 + ux * 3.5);
  ctx.lineTo(tip[0] - ux * 7 + uy * 3.5, tip[1] - uy * 7 - ux * 3.5);
  ctx.closePath();
  ctx.fill();
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
    // a small graph: thicker edges, arrowheads when directed, weights at the middle
    const small = n <= 30;
    const r = Math.max(2.5, Math.min(7, s * 40));
    (v.edges || []).forEach(([a, b], i) => {
      line(ctx, at(a), at(b), theme.muted, small ? 1 : 0.5);
      if (small && v.directed) arrowhead(ctx, at(a), at(b), r + 1, theme.muted);
      if (v.weights) {
        const [x1, y1] = at(a);
        const [x2, y2] = at(b);
        const label = String(v.weights[i]);
        const mx = (x1 + x2) / 2;
        const my = (y1 + y2) / 2;
        ctx.clearRect(mx - label.length * 3.5 - 1, my - 6, label.length * 7 + 2, 12);
        text(ctx, label, mx, my, theme.fg, "center");
      }
    });
    (v.missing || []).forEach(([a, b]) => {
      ctx.setLineDash([3, 3]);
      line(ctx, at(a), at(b), theme.bad, 1);
      ctx.setLineDash([]);
    });
  }
  (v.tree || []).forEach(([a, b]) => line(ctx, at(a), at(b), theme.accent, 2.5));
  const parents = v.parents || [];
  parents.forEach((p, i) => p !== i && line(ctx, at(i), at(p), theme.accent, 1.5));
  polyline(ctx, v.path, at, theme.bad, Math.max(2, s / 4));
  polyline(ctx, v.cycle, at, theme.bad, 3);
  if (v.edge) line(ctx, at(v.edge[0]), at(v.edge[1]), theme.fg, 3);
  // the source and the target first, then each node's name where it has room (beside its node,
  // clear of the other names and of the nodes), none on a grid
  const space = new LabelSpace({ left: area.x, top: area.y - 2, w: area.x + area.w, h: area.y + area.h });
  for (const [i, label] of [
    [v.source, "S"],
    [v.target, "T"],
  ]) {
    if (i === undefined || i < 0) continue;
    const [x, y] = at(i);
    space.place(ctx, [[label, x, y]], theme.fg);
  }
  if (!grid) {
    const r = Math.max(2.5, Math.min(7, s * 40));
    const sides = v.sides || null; // a two-colouring: the colours, not the visit order
    for (let i = 0; i < n; i++) {
      const [x, y] = at(i);
      if (sides) ctx.fillStyle = sides[i] < 0 ? theme.track : sides[i] ? theme.fg : theme.accent;
      else ctx.fillStyle = visit[i] >= 0 ? heat(visit[i], seen) : theme.track;
      ctx.beginPath();
      ctx.arc(x, y, r, 0, 2 * Math.PI);
      ctx.fill();
      if (frontier.has(i)) {
        ctx.strokeStyle = theme.good;
        ctx.lineWidth = 2;
        ctx.stroke();
      }
      space.take(x - r, y - r, x + r, y + r);
    }
    const names = v.names || [];
    if (names.length && n <= 60) {
      for (let i = 0; i < n; i++) {
        const [x, y] = at(i);
        const gap = r + 3 + ctx.measureText(names[i]).width / 2;
        space.place(
          ctx,
          [
            [names[i], x + gap, y - r],
            [names[i], x - gap, y - r],
            [names[i], x + gap, y + r],
            [names[i], x - gap, y + r],
          ],
          theme.muted,
        );
      }
    }
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

// graph: the same graph in every panel (visit order as heat, or the two colours of a two-colouring;
// the frontier outlined, the current edge, the path, tree or cycle, the missing pairs of a complete
// check dashed; arrows and weights on small graphs), in the frame every stepping panel shares
// (../stepframe.js: all of the pseudocode, the step's whole sentence)
registerRenderer("graph", (ctx, v, box, theme) => {
  const status = v.done ? "done" : `${v.frontier_kind || "step"} ${fmt((v.frontier || []).length)}`;
  const area = stepFrame(ctx, v, box, theme, status);
  if (v.matrix) {
    const half = { ...area, w: area.w / 2 };
    drawGraph(ctx, v, half, theme);
    drawMatrix(ctx, v, { ...area, x: area.x + area.w / 2, w: area.w / 2 }, theme);
  } else {
    drawGraph(ctx, v, area, theme);
  }
});
