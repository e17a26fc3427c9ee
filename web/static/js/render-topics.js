// Renderers for the topics' views (see each topic's Panel.view()). Each draws into {w, h} CSS
// pixels; anything missing from a view is skipped rather than fatal (drawView falls back).
import { registerRenderer, fmt } from "./render.js";

const PAD = 8;

function text(ctx, s, x, y, color, align = "left") {
  ctx.fillStyle = color;
  ctx.textAlign = align;
  ctx.fillText(s, x, y);
}

function meter(ctx, x, y, w, h, frac, color, theme) {
  ctx.fillStyle = theme.track;
  ctx.fillRect(x, y, w, h);
  ctx.fillStyle = color;
  ctx.fillRect(x, y, Math.max(0, Math.min(1, frac || 0)) * w, h);
}

/** A strip of recent outcomes, newest on the right: ok -> good, else bad. */
function outcomes(ctx, items, y, h, box, theme, isOk) {
  const n = items.length;
  if (!n) return;
  const w = Math.max(2, Math.min(10, (box.w - 2 * PAD) / n));
  const x0 = box.w - PAD - n * w;
  items.forEach((it, i) => {
    ctx.fillStyle = isOk(it) ? theme.good : theme.bad;
    ctx.fillRect(x0 + i * w, y, Math.max(1, w - 1), h);
  });
}

// alloc: the heap as one address line, a colour per object, holes empty
registerRenderer("heap", (ctx, v, box, theme) => {
  const heap = v.heap || 1;
  const rows = 4;
  const rowH = Math.floor((box.h - 48) / rows);
  const width = box.w - 2 * PAD;
  const per = heap / rows;
  for (let r = 0; r < rows; r++) {
    ctx.fillStyle = theme.track;
    ctx.fillRect(PAD, 18 + r * rowH, width, rowH - 3);
  }
  for (const [start, size, id] of v.ranges || []) {
    let s = start;
    const end = start + size;
    while (s < end) {
      const r = Math.floor(s / per);
      const rowEnd = Math.min(end, (r + 1) * per);
      const x = PAD + ((s - r * per) / per) * width;
      ctx.fillStyle = theme.palette[Math.abs(Number(id) || 0) % theme.palette.length];
      ctx.fillRect(x, 18 + r * rowH, Math.max(1, ((rowEnd - s) / per) * width - 0.5), rowH - 3);
      s = rowEnd;
    }
  }
  const used = (v.ranges || []).reduce((a, r) => a + r[1], 0);
  text(ctx, `${(v.ranges || []).length} blocks · ${((used / heap) * 100).toFixed(0)}% of ${fmt(heap)} B`, PAD, 9, theme.muted);
  const recent = (v.recent || []).slice(-40);
  text(ctx, "recent operations: ok / failed", PAD, box.h - 20, theme.muted);
  outcomes(ctx, recent, box.h - 12, 8, box, theme, (r) => r[r.length - 1] !== false);
});

// paging: the frames and their pages, then the recent references (hit / fault)
registerRenderer("frames", (ctx, v, box, theme) => {
  const res = v.resident || [];
  const frames = v.frames || res.length || 1;
  text(ctx, `${res.length} / ${frames} frames resident`, PAD, 9, theme.muted);
  const cols = Math.min(frames, Math.max(1, Math.floor((box.w - 2 * PAD) / 26)));
  const rows = Math.ceil(frames / cols);
  const cw = (box.w - 2 * PAD) / cols;
  const ch = Math.min(30, (box.h - 60) / rows);
  for (let i = 0; i < frames; i++) {
    const x = PAD + (i % cols) * cw;
    const y = 18 + Math.floor(i / cols) * ch;
    ctx.fillStyle = i < res.length ? theme.accent : theme.track;
    ctx.fillRect(x, y, cw - 2, ch - 2);
    if (i < res.length && cw > 16 && ch > 10) text(ctx, String(res[i]), x + cw / 2 - 1, y + ch / 2, theme.onAccent, "center");
  }
  const recent = v.recent || [];
  const cw2 = (box.w - 2 * PAD) / Math.max(recent.length, 1);
  if (recent.length && cw2 >= 14) {
    // few references: show each page, green for a hit, red for a fault
    text(ctx, "recent references (green hit, red fault)", PAD, box.h - 30, theme.muted);
    recent.forEach(([page, hit], i) => {
      ctx.fillStyle = hit ? theme.good : theme.bad;
      ctx.fillRect(PAD + i * cw2, box.h - 22, cw2 - 2, 18);
      text(ctx, String(page), PAD + i * cw2 + cw2 / 2 - 1, box.h - 12.5, theme.onAccent, "center");
    });
  } else {
    text(ctx, "recent references: hit / fault", PAD, box.h - 20, theme.muted);
    outcomes(ctx, recent, box.h - 12, 8, box, theme, (r) => r[1]);
  }
});

// cache: each list as a row of cells (ghost lists faded), with its size
registerRenderer("cache", (ctx, v, box, theme) => {
  const lists = v.lists || [];
  text(ctx, `${fmt(v.resident ?? 0)} / ${fmt(v.capacity ?? 0)} resident`, PAD, 9, theme.muted);
  if (v.p !== undefined) text(ctx, `p = ${fmt(v.p)}`, box.w - PAD, 9, theme.muted, "right");
  const rowH = Math.max(18, Math.min(34, (box.h - 20) / Math.max(1, lists.length)));
  lists.forEach((l, i) => {
    const y = 20 + i * rowH;
    text(ctx, `${l.name} ${fmt(l.size ?? (l.items || []).length)}${l.ghost ? " (ghost)" : ""}`, PAD, y + 5, theme.fg);
    const items = l.items || [];
    const n = items.length;
    if (!n) return;
    const w = (box.w - 2 * PAD) / Math.max(n, 24);
    ctx.globalAlpha = l.ghost ? 0.35 : 1;
    items.forEach((key, k) => {
      ctx.fillStyle = theme.palette[Math.abs(Number(key) || k) % theme.palette.length];
      ctx.fillRect(PAD + k * w, y + 11, Math.max(1, w - 0.5), rowH - 15);
    });
    ctx.globalAlpha = 1;
  });
});

// rate limiting by tokens per minute: the counter against the limit, actual use beside it
registerRenderer("tpm", (ctx, v, box, theme) => {
  const limit = v.limit || 1;
  text(ctx, `counted ${fmt(v.counter ?? 0)} / ${fmt(limit)}`, PAD, 10, theme.fg);
  meter(ctx, PAD, 20, box.w - 2 * PAD, 14, (v.counter ?? 0) / limit, theme.accent, theme);
  text(ctx, `actually used ${fmt(v.actual ?? 0)}`, PAD, 48, theme.fg);
  meter(ctx, PAD, 58, box.w - 2 * PAD, 14, (v.actual ?? 0) / limit, theme.good, theme);
  text(ctx, `in flight ${fmt(v.in_flight ?? 0)} · waiting ${fmt(v.waiting ?? 0)} · rpm ${fmt(v.rpm ?? 0)}`, PAD, 88, theme.muted);
  text(ctx, "recent requests: ok / 429", PAD, box.h - 20, theme.muted);
  outcomes(ctx, v.recent || [], box.h - 12, 8, box, theme, (r) => r[1] === "ok" || r[1] === true);
});

function bars(ctx, items, value, label, box, theme, y0, color = theme.accent) {
  const n = items.length;
  if (!n) return;
  const h = box.h - y0 - 16;
  const w = (box.w - 2 * PAD) / n;
  const mx = Math.max(1e-9, ...items.map(value));
  items.forEach((it, i) => {
    const v = value(it);
    const bh = (v / mx) * (h - 12);
    ctx.fillStyle = it.alive === false ? theme.bad : typeof color === "function" ? color(it, i) : color;
    ctx.fillRect(PAD + i * w + 1, y0 + h - bh, Math.max(1, w - 2), bh);
    if (w > 30) text(ctx, fmt(v), PAD + i * w + w / 2, y0 + h - bh - 6, theme.fg, "center");
    if (w > 18) text(ctx, label(it, i), PAD + i * w + w / 2, box.h - 7, theme.muted, "center");
  });
}

// load balancing: active requests per server (a dead server in red)
registerRenderer("balance", (ctx, v, box, theme) => {
  const servers = v.servers || [];
  text(ctx, "active requests per server", PAD, 9, theme.muted);
  bars(ctx, servers, (s) => s.active ?? 0, (s, i) => (s.speed !== undefined && s.speed !== 1 ? `${fmt(s.speed)}×` : `s${i}`), box, theme, 16);
});

// consistent hashing: keys per member; the ring's points as a strip coloured by owner
registerRenderer("hashing", (ctx, v, box, theme) => {
  const members = v.members || [];
  const ring = v.ring || [];
  const top = ring.length ? 30 : 16;
  if (ring.length) {
    text(ctx, "ring (points by owner)", PAD, 9, theme.muted);
    const w = box.w - 2 * PAD;
    for (const [pos, owner] of ring) {
      ctx.fillStyle = theme.palette[owner % theme.palette.length];
      ctx.fillRect(PAD + pos * w, 16, 2, 8);
    }
  } else text(ctx, "keys per node", PAD, 9, theme.muted);
  bars(ctx, members, (m) => m.load ?? 0, (m) => m.name, box, theme, top, (m, i) => theme.palette[i % theme.palette.length]);
});

// an LLM engine: KV usage, running sequences as context bars, the waiting queue
function drawEngine(ctx, v, box, theme, y0 = 0, h = box.h) {
  text(ctx, `${v.allocator || ""} · ${v.scheduler || ""}`, PAD, y0 + 9, theme.muted);
  text(ctx, `KV ${((v.kv_usage ?? 0) * 100).toFixed(1)}%`, box.w - PAD, y0 + 9, theme.fg, "right");
  meter(ctx, PAD, y0 + 17, box.w - 2 * PAD, 8, v.kv_usage ?? 0, theme.accent, theme);
  const running = v.running || [];
  const maxCtx = Math.max(1, ...running.map((r) => r.reserved ?? r.context ?? 1));
  const rows = Math.max(1, Math.min(running.length, Math.floor((h - 52) / 5)));
  const rh = Math.max(2, Math.min(10, (h - 52) / rows));
  running.slice(0, rows).forEach((r, i) => {
    const y = y0 + 31 + i * rh;
    const w = box.w - 2 * PAD;
    ctx.fillStyle = theme.track;
    ctx.fillRect(PAD, y, ((r.reserved ?? r.context) / maxCtx) * w, rh - 1);
    ctx.fillStyle = theme.accent;
    ctx.fillRect(PAD, y, ((r.prompt ?? 0) / maxCtx) * w, rh - 1);
    ctx.fillStyle = theme.good;
    ctx.fillRect(PAD + ((r.prompt ?? 0) / maxCtx) * w, y, ((r.generated ?? 0) / maxCtx) * w, rh - 1);
  });
  const nWait = v.num_waiting ?? (v.waiting || []).length;
  const label = `running ${v.num_running ?? running.length} · waiting ${nWait}`;
  text(ctx, label, PAD, y0 + h - 8, theme.muted);
  const qx = PAD + ctx.measureText(label).width + 8;
  const shown = Math.min(nWait, Math.floor((box.w - PAD - qx) / 5));
  ctx.fillStyle = theme.bad;
  for (let i = 0; i < shown; i++) ctx.fillRect(qx + i * 5, y0 + h - 12, 4, 8);
}
registerRenderer("engine", (ctx, v, box, theme) => drawEngine(ctx, v, box, theme));

registerRenderer("deployment", (ctx, v, box, theme) => {
  const engines = [...(v.prefill || []), ...(v.decode || [])];
  if (!engines.length) return;
  const h = box.h / engines.length;
  engines.forEach((e, i) => drawEngine(ctx, e, box, theme, i * h, h));
});

// cluster routing: per replica, its load and its prefix-cache occupancy
registerRenderer("cluster", (ctx, v, box, theme) => {
  const reps = v.replicas || [];
  text(ctx, `router ${v.router || ""}`, PAD, 9, theme.muted);
  const n = reps.length || 1;
  const w = (box.w - 2 * PAD) / n;
  const h = box.h - 40;
  const num = (r, keys) => keys.map((k) => r[k]).find((x) => typeof x === "number") ?? 0;
  const loads = reps.map((r) => num(r, ["queue", "waiting", "load", "num_waiting", "running", "active"]));
  const mx = Math.max(1e-9, ...loads);
  reps.forEach((r, i) => {
    const x = PAD + i * w;
    const kv = num(r, ["kv_usage", "kv_utilization", "cache_usage"]);
    ctx.fillStyle = theme.track;
    ctx.fillRect(x + 1, 18, Math.max(1, w - 2), h);
    ctx.fillStyle = theme.palette[i % theme.palette.length];
    ctx.globalAlpha = 0.35;
    ctx.fillRect(x + 1, 18 + h * (1 - Math.min(1, kv)), Math.max(1, w - 2), h * Math.min(1, kv));
    ctx.globalAlpha = 1;
    const lh = (loads[i] / mx) * h;
    ctx.fillRect(x + w * 0.3, 18 + h - lh, Math.max(1, w * 0.4), lh);
    if (w > 18) text(ctx, fmt(loads[i]), x + w / 2, box.h - 12, theme.fg, "center");
  });
});
