// Renderers of topic `hashing`'s view kinds (sims/hashing/topic.toml `views`), loaded by render.js's
// loadTopic("hashing") when a preset of the topic is shown.
import { registerRenderer } from "../render.js";
import { PAD, text, bars } from "../draw.js";

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
