// Renderers of topic `hashing`'s view kinds (sims/hashing/topic.toml `views`), loaded by render.js's
// loadTopic("hashing") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, text, bars } from "../draw.js";

// consistent hashing: keys per member (one scale across the panels); the ring's points as a strip
// coloured by owner; after a membership change, the share of keys that moved, as a strip
registerRenderer("hashing", (ctx, v, box, theme) => {
  const members = v.members || [];
  const ring = v.ring || [];
  const last = (v.changes || [])[(v.changes || []).length - 1];
  const top = (ring.length ? 30 : 16) + (last ? 22 : 0);
  if (last) {
    const y = ring.length ? 30 : 16;
    const w = box.w - 2 * PAD;
    const frac = Math.max(0, Math.min(1, last.fraction ?? 0));
    ctx.fillStyle = theme.track;
    ctx.fillRect(PAD, y + 8, w, 8);
    ctx.fillStyle = theme.bad;
    ctx.fillRect(PAD, y + 8, frac * w, 8);
    const what = `${last.kind === "remove_node" ? "−" : "+"}${last.node ?? "node"} at ${fmt(last.t)} s`;
    text(ctx, `${what}: ${fmt(last.moved ?? 0)} of ${fmt(last.keys ?? 0)} keys moved (${(frac * 100).toFixed(1)}%)`, PAD, y + 2, theme.fg);
  }
  if (ring.length) {
    text(ctx, "ring (points by owner)", PAD, 9, theme.muted);
    const w = box.w - 2 * PAD;
    for (const [pos, owner] of ring) {
      ctx.fillStyle = theme.keys[owner % theme.keys.length];
      ctx.fillRect(PAD + pos * w, 16, 2, 8);
    }
  } else text(ctx, "keys per node", PAD, 9, theme.muted);
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
