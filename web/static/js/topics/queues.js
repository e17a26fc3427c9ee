// Renderers of topic `queues`'s view kinds (sims/queues/topic.toml `views`), loaded by render.js's
// loadTopic("queues") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, text } from "../draw.js";

// A request's colour: its class (0 = accent), greyed once its client has timed out and left.
const colour = (job, theme) => (job.gone ? theme.track : job.cls ? theme.palette[job.cls % theme.palette.length] : theme.accent);

// What the discipline is doing right now, in a few words (CoDel's state, adaptive LIFO's mode).
function mode(policy) {
  if (!policy) return "";
  if (policy.mode) return policy.mode;
  if (policy.overloaded !== undefined) return policy.overloaded ? "shedding" : "";
  if (policy.dropping !== undefined) return policy.dropping ? `dropping (${policy.count})` : "";
  return "";
}

// queues: one row per waiting line; its servers on the right, the line growing to the left with
// the next request to be served nearest the servers
registerRenderer("queues", (ctx, v, box, theme) => {
  const queues = v.queues || [];
  if (!queues.length) return;
  const top = 18;
  const rowH = Math.max(14, Math.min(48, (box.h - top - 14) / queues.length));
  const cellH = Math.max(6, rowH - 14);
  const waiting = queues.reduce((n, q) => n + (q.waiting || 0), 0);
  text(ctx, `${fmt(waiting)} waiting`, PAD, 11, theme.fg);
  if (v.timeout) text(ctx, `grey: client gave up (timeout ${fmt(v.timeout)} s)`, box.w - PAD, 11, theme.muted, "right");
  queues.forEach((q, r) => {
    const y = top + r * rowH;
    const sw = Math.max(10, Math.min(22, (box.w * 0.3) / Math.max(1, q.servers)));
    const sx = box.w - PAD - q.servers * sw;
    for (let s = 0; s < q.servers; s++) {
      const job = (q.busy || [])[s];
      ctx.strokeStyle = theme.muted;
      ctx.strokeRect(sx + s * sw + 0.5, y + 0.5, sw - 2, cellH);
      if (job) {
        ctx.fillStyle = colour(job, theme);
        ctx.fillRect(sx + s * sw + 2, y + 2, sw - 5, cellH - 3);
      }
    }
    const head = q.head || [];
    const cw = Math.max(2, Math.min(10, (sx - PAD - 40) / Math.max(head.length, 24)));
    head.forEach((job, i) => {
      const x = sx - 6 - (i + 1) * cw;
      if (x < PAD + 36) return;
      ctx.fillStyle = colour(job, theme);
      ctx.fillRect(x, y + 2, Math.max(1, cw - 1), cellH - 3);
    });
    const more = (q.waiting || 0) - head.length;
    text(ctx, more > 0 ? `+${fmt(more)}` : `${fmt(q.waiting || 0)}`, PAD, y + cellH / 2 + 4, theme.muted);
    const m = mode(q.policy);
    if (m && rowH >= 24) text(ctx, m, sx - 6, y + cellH + 10, theme.bad, "right");
  });
  const oldest = queues.flatMap((q) => (q.head || []).map((j) => j.age || 0));
  if (oldest.length) text(ctx, `oldest shown waited ${fmt(Math.max(...oldest))} s`, PAD, box.h - 4, theme.muted);
});
