// Renderers of topic `alloc`'s view kinds (sims/alloc/topic.toml `views`), loaded by render.js's
// loadTopic("alloc") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, text, outcomes } from "../draw.js";

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
