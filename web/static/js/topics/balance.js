// Renderers of topic `balance`'s view kinds (sims/balance/topic.toml `views`), loaded by render.js's
// loadTopic("balance") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, text, bars } from "../draw.js";

// load balancing: active requests per server (a dead server crossed out in red), on one scale
// across the compared panels (theme.scales, from the element), so a calm panel looks calm
registerRenderer("balance", (ctx, v, box, theme) => {
  const servers = v.servers || [];
  const max = theme.scales?.["servers.active"] || 0;
  text(ctx, box.w < 220 ? `scale 0–${fmt(max)}, shared` : `per server · shared scale 0–${fmt(max)}`, PAD, 9, theme.muted);
  bars(
    ctx,
    servers,
    (s) => s.active ?? 0,
    (s, i) => (s.speed !== undefined && s.speed !== 1 ? `${fmt(s.speed)}×` : `s${i}`),
    box,
    theme,
    16,
    theme.accent,
    max,
  );
});
