// Renderers of topic `paging`'s view kinds (sims/paging/topic.toml `views`), loaded by render.js's
// loadTopic("paging") when a preset of the topic is shown.
import { registerRenderer } from "../render.js";
import { PAD, markCell, markNote, outcomes, text } from "../draw.js";

// paging: the frames and their pages, then the recent references (hit / fault); under the frames
// (or beside the header where they fill the box) the workload's latest moment ("phase 5: new
// working set, 0.01 s ago")
registerRenderer("frames", (ctx, v, box, theme) => {
  const res = v.resident || [];
  const frames = v.frames || res.length || 1;
  const head = `${res.length} / ${frames} frames resident`;
  text(ctx, head, PAD, 9, theme.muted);
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
    if (i < res.length) markCell(ctx, res[i], x + 1, y + 2, cw - 4, ch - 6, theme);
  }
  const below = 18 + rows * ch + 8;
  if (box.h - 30 - below >= 8) markNote(ctx, theme, PAD, below, "left", box.w - 2 * PAD);
  else markNote(ctx, theme, box.w - PAD, 9, "right", box.w - 3 * PAD - ctx.measureText(head).width);
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
