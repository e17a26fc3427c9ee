// Renderers of topic `queues`'s view kinds (sims/queues/topic.toml `views`), loaded by render.js's
// loadTopic("queues") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, text, markNote } from "../draw.js";

// A request's colour: its class (0 = accent), greyed once its client has timed out and left.
const colour = (job, theme) => (job.gone ? theme.track : job.cls ? theme.palette[job.cls % theme.palette.length] : theme.accent);

// What the discipline is doing right now, when it is worth a word (CoDel shedding, LIFO mode).
function mode(policy) {
  if (!policy) return "";
  if (policy.mode) return policy.mode === "lifo" ? "LIFO" : "";
  if (policy.overloaded !== undefined) return policy.overloaded ? "shedding" : "";
  if (policy.dropping !== undefined) return policy.dropping ? `dropping (${policy.count})` : "";
  return "";
}

// queues: one row per waiting line; its servers on the right, the line growing to the left with
// the next request to be served nearest the servers
registerRenderer("queues", (ctx, v, box, theme) => {
  const queues = v.queues || [];
  if (!queues.length) return;
  const top = 20;
  const bottom = 16;
  const rowH = Math.max(12, Math.min(44, (box.h - top - bottom) / queues.length));
  const cellH = Math.max(6, rowH - 8);
  const waiting = queues.reduce((n, q) => n + (q.waiting || 0), 0);
  text(ctx, `${fmt(waiting)} waiting`, PAD, 12, theme.fg);
  const modes = [...new Set(queues.map((q) => mode(q.policy)).filter(Boolean))];
  if (modes.length) text(ctx, modes.join(", "), box.w - PAD, 12, theme.bad, "right");
  let gone = 0;
  let oldest = 0;
  queues.forEach((q, r) => {
    const y = top + r * rowH;
    const sw = Math.max(8, Math.min(22, (box.w * 0.3) / Math.max(1, q.servers)));
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
    const room = sx - 6 - (PAD + 36);
    const cw = Math.max(2, Math.min(10, room / Math.max(head.length, 24)));
    head.forEach((job, i) => {
      const x = sx - 6 - (i + 1) * cw;
      if (x < PAD + 36) return;
      gone += job.gone ? 1 : 0;
      oldest = Math.max(oldest, job.age || 0);
      ctx.fillStyle = colour(job, theme);
      ctx.fillRect(x, y + 2, Math.max(1, cw - 1), cellH - 3);
    });
    const more = (q.waiting || 0) - head.length;
    text(ctx, more > 0 ? `+${fmt(more)}` : `${fmt(q.waiting || 0)}`, PAD, y + cellH / 2, theme.muted);
  });
  const notes = [];
  if (oldest) notes.push(`oldest ${fmt(oldest)} s`);
  if (gone) notes.push("grey = client gone");
  if (notes.length) text(ctx, notes.join(" · "), PAD, box.h - 8, theme.muted);
  else markNote(ctx, theme, PAD, box.h - 8, "left", box.w - 2 * PAD); // the latest surge or burst
});
