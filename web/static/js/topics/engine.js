// Renderers of topic `engine`'s view kinds (sims/engine/topic.toml `views`), loaded by render.js's
// loadTopic("engine") when a preset of the topic is shown.
import { registerRenderer } from "../render.js";
import { PAD, text, meter } from "../draw.js";

// an LLM engine: KV usage, running sequences as context bars, the waiting queue
function drawEngine(ctx, v, box, theme, y0 = 0, h = box.h) {
  text(ctx, `${v.allocator || ""} · ${v.scheduler || ""}`, PAD, y0 + 9, theme.muted);
  text(ctx, `KV held now ${((v.kv_usage ?? 0) * 100).toFixed(1)}%`, box.w - PAD, y0 + 9, theme.fg, "right");
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
