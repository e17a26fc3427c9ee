// Renderers of topic `hashing`'s view kinds (sims/hashing/topic.toml `views`), loaded by render.js's
// loadTopic("hashing") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, bars, fitText, text } from "../draw.js";

// consistent hashing: keys per member (one scale across the panels); the ring's points as a strip
// coloured by owner; after a membership change, the share of keys that moved, as a strip
registerRenderer("hashing", (ctx, v, box, theme) => {
  const members = v.members || [];
  const ring = v.ring || [];
  const last = (v.changes || [])[(v.changes || []).length - 1];
  const w = box.w - 2 * PAD;
  let y = 16; // the top of what comes next
  if (ring.length) {
    text(ctx, "ring (points by owner)", PAD, 8, theme.muted);
    for (const [pos, owner] of ring) {
      ctx.fillStyle = theme.keys[owner % theme.keys.length];
      ctx.fillRect(PAD + pos * w, 16, 2, 8);
    }
    y = 30;
  } else text(ctx, "keys per node", PAD, 8, theme.muted);
  if (last) {
    const frac = Math.max(0, Math.min(1, last.fraction ?? 0));
    const what = `${last.kind === "remove_node" ? "−" : "+"}${last.node ?? "node"} at ${fmt(last.t)} s`;
    const pct = `${(frac * 100).toFixed(1)}%`;
    fitText(
      ctx,
      [`${what}: ${fmt(last.moved ?? 0)} of ${fmt(last.keys ?? 0)} keys moved (${pct})`, `${what}: ${pct} of keys moved`, `${pct} moved`],
      PAD,
      y + 6,
      theme.fg,
      "left",
      w,
    );
    ctx.fillStyle = theme.track;
    ctx.fillRect(PAD, y + 14, w, 8);
    ctx.fillStyle = theme.bad;
    ctx.fillRect(PAD, y + 14, frac * w, 8);
    y += 28;
  }
  const top = y;
  bars(
    ctx,
    members,
    (m) => m.load ?? 0,
    (m) => m.name,
    box,
    theme,
    top,
    (m, i) => theme.keys[i % theme.keys.length],
    theme.scales?.["members.load"] || 0,
  );
});
