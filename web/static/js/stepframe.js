// What every stepping panel draws (sims/steps: graphs, sorting): a header with the algorithm and
// its step count, all of the pseudocode with the line that ran highlighted (beside the picture in
// a wide panel, under it in a narrow one; a long line wraps under its own indent), and the step's
// whole sentence along the bottom, wrapped. A topic's renderer calls stepFrame and draws its own
// picture in the area it returns.
import { fmt } from "./render.js";
import { PAD, text, wrapLines } from "./draw.js";

const CODE_FONT = "11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace";
const LINE = 14; // CSS px per line of code or of the step's sentence
const TOP = 16; // the header's line
const BESIDE = 760; // the narrowest panel that has the pseudocode beside its picture

// a line of text cut with an ellipsis to the width it has (about 6.5 px a character)
function clipped(ctx, s, x, y, w, color) {
  const max = Math.floor(w / 6.5);
  text(ctx, s.length > max ? `${s.slice(0, max - 1)}…` : s, x, y, color);
}

/** The pseudocode as lines no wider than `width` (a long line goes on under its own indent + 4). */
function codeLines(ctx, v, width) {
  ctx.save();
  ctx.font = CODE_FONT;
  const out = [];
  (v.pseudocode || []).forEach((s, i) => {
    const indent = " ".repeat(s.length - s.trimStart().length + 4);
    for (const part of wrapLines(ctx, s, width, indent)) out.push({ s: part, ran: i === v.line });
  });
  ctx.restore();
  return out;
}

function drawCode(ctx, lines, area, theme) {
  ctx.save();
  ctx.font = CODE_FONT;
  lines.forEach(({ s, ran }, i) => {
    const y = area.y + i * LINE + LINE / 2;
    if (ran) {
      ctx.fillStyle = theme.track;
      ctx.fillRect(area.x, y - LINE / 2, area.w, LINE);
    }
    text(ctx, s, area.x + 2, y, ran ? theme.fg : theme.muted);
  });
  ctx.restore();
}

// header, pseudocode and sentence; returns the area left for the topic's picture
export function stepFrame(ctx, v, box, theme, status) {
  const inner = box.w - 2 * PAD;
  const say = wrapLines(ctx, v.narration || "", inner);
  const foot = say.length * LINE + 4;
  const beside = box.w >= BESIDE;
  let code = [];
  let codeW = 0;
  if ((v.pseudocode || []).length) {
    ctx.save();
    ctx.font = CODE_FONT;
    const widest = Math.max(...v.pseudocode.map((l) => ctx.measureText(l).width)) + 6;
    ctx.restore();
    codeW = beside ? Math.min(widest, inner * 0.5) : inner;
    code = codeLines(ctx, v, codeW - 4);
  }
  const codeH = beside ? 0 : code.length * LINE + 6;
  const area = { x: PAD, y: TOP, w: inner - (beside ? codeW + 10 : 0), h: box.h - TOP - foot - codeH };
  clipped(ctx, `${v.algorithm || ""} · step ${fmt(v.steps || 0)} · ${status}`, PAD, 7, inner, theme.fg);
  if (code.length) {
    const where = beside ? { x: box.w - PAD - codeW, y: TOP, w: codeW } : { x: PAD, y: area.y + area.h + 4, w: codeW };
    drawCode(ctx, code, where, theme);
  }
  say.forEach((s, i) => text(ctx, s, PAD, box.h - foot + 2 + i * LINE + LINE / 2, theme.fg));
  return area;
}
