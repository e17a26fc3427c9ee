// Renderers of topic `engine`'s view kinds (sims/engine/topic.toml `views`), loaded by render.js's
// loadTopic("engine") when a preset of the topic is shown.
import { fmt, registerRenderer } from "../render.js";
import { PAD, fitText, meter, text } from "../draw.js";

// The engine's last steps along time, each as wide as it took and as tall as it took (a decoder
// in the batch waits that long for its next token), on one scale across the compared panels
// (`longest`, seconds): a step that carried a prefill chunk in the accent, decode-only steps green.
function drawSteps(ctx, steps, x0, y0, w, h, theme, longest) {
  if (!steps.length || h < 14) return;
  const t0 = steps[0][0];
  const t1 = Math.max(...steps.map(([t, d]) => t + d));
  const span = Math.max(1e-9, t1 - t0);
  const top = Math.max(1e-9, longest || 0, ...steps.map((s) => s[1]));
  const barH = h - 14;
  for (const [t, dur, prefill] of steps) {
    const bh = Math.max(1, (dur / top) * barH);
    ctx.fillStyle = prefill ? theme.accent : theme.good;
    ctx.fillRect(x0 + ((t - t0) / span) * w, y0 + h - bh, Math.max(1, (dur / span) * w - 0.5), bh);
  }
  const mine = Math.max(...steps.map((s) => s[1]));
  fitText(
    ctx,
    [`last ${steps.length} steps: height = a decoder's wait; longest ${fmt(mine * 1000)} ms`, `longest step ${fmt(mine * 1000)} ms`],
    x0,
    y0 + 5,
    theme.muted,
    "left",
    w,
  );
}

// an LLM engine: KV usage, running sequences as context bars, its last steps, the waiting queue;
// `role` (a deployment's) names the GPU and what it does
function drawEngine(ctx, v, box, theme, y0 = 0, h = box.h, role = "") {
  const head = `${v.allocator || ""} · ${v.scheduler || ""}`;
  const kv = `KV held now ${((v.kv_usage ?? 0) * 100).toFixed(1)}%`;
  const kvW = ctx.measureText(kv).width;
  text(ctx, kv, box.w - PAD, y0 + 8, theme.fg, "right");
  fitText(ctx, role ? [`${role} · ${head}`, role] : [head], PAD, y0 + 8, role ? theme.fg : theme.muted, "left", box.w - 2 * PAD - kvW - 8);
  meter(ctx, PAD, y0 + 16, box.w - 2 * PAD, 8, v.kv_usage ?? 0, theme.accent, theme);
  const running = v.running || [];
  const stepsH = (v.steps || []).length && h >= 120 ? Math.min(60, Math.floor(h * 0.3)) : 0;
  const area = h - 52 - stepsH;
  const maxCtx = Math.max(1, ...running.map((r) => r.reserved ?? r.context ?? 1));
  const rows = Math.max(1, Math.min(running.length, Math.floor(area / 5)));
  const rh = Math.max(2, Math.min(10, area / rows));
  running.slice(0, rows).forEach((r, i) => {
    const y = y0 + 30 + i * rh;
    const w = box.w - 2 * PAD;
    ctx.fillStyle = theme.track;
    ctx.fillRect(PAD, y, ((r.reserved ?? r.context) / maxCtx) * w, rh - 1);
    ctx.fillStyle = theme.accent;
    ctx.fillRect(PAD, y, ((r.prompt ?? 0) / maxCtx) * w, rh - 1);
    ctx.fillStyle = theme.good;
    ctx.fillRect(PAD + ((r.prompt ?? 0) / maxCtx) * w, y, ((r.generated ?? 0) / maxCtx) * w, rh - 1);
  });
  if (stepsH) drawSteps(ctx, v.steps, PAD, y0 + h - 20 - stepsH, box.w - 2 * PAD, stepsH, theme, role ? 0 : theme.scales?.["steps.1"]);
  const nWait = v.num_waiting ?? (v.waiting || []).length;
  const label = `running ${v.num_running ?? running.length} · waiting ${nWait}`;
  text(ctx, label, PAD, y0 + h - 9, theme.muted);
  const qx = PAD + ctx.measureText(label).width + 8;
  const shown = Math.min(nWait, Math.floor((box.w - PAD - qx) / 5));
  ctx.fillStyle = theme.bad;
  for (let i = 0; i < shown; i++) ctx.fillRect(qx + i * 5, y0 + h - 13, 4, 8);
}
registerRenderer("engine", (ctx, v, box, theme) => drawEngine(ctx, v, box, theme));

// a deployment: its GPUs one under the other, each named with what it does (a colocated GPU
// prefills and decodes; a disaggregated one only prefills or only decodes)
registerRenderer("deployment", (ctx, v, box, theme) => {
  const split = v.mode === "disaggregated";
  const engines = [
    ...(v.prefill || []).map((e) => [e, split ? "prefill only" : "prefill + decode"]),
    ...(v.decode || []).map((e) => [e, split ? "decode only" : "prefill + decode"]),
  ];
  if (!engines.length) return;
  const h = box.h / engines.length;
  engines.forEach(([e, job], i) => drawEngine(ctx, e, box, theme, i * h, h, `GPU ${i + 1}: ${job}`));
});
