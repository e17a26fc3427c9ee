// A debug hook: where the text drawn on canvases goes. With `globalThis.contentionTextBoxes` set to
// a Map before the page's modules run (a test's init script does), every fillText/strokeText on
// any canvas (the topics' renderers and the charts alike) is recorded into it: canvas ->
// [{text, x0, y0, x1, y1}], the box of the glyphs in the canvas's pixels (its bitmap, before the
// CSS scale), from measureText under the context's font, alignment, baseline and transform. A
// canvas's list starts again whenever the canvas is cleared whole, so it always holds the text of
// the frame on screen. Nothing is recorded, and nothing is patched, without the Map.

/** Patch the 2D context once so that every text drawn lands in `store` (see above). */
export function recordTextBoxes(store) {
  const proto = CanvasRenderingContext2D.prototype;
  if (proto.__textBoxes) return;
  proto.__textBoxes = true;
  const clear = proto.clearRect;
  proto.clearRect = function (x, y, w, h) {
    const c = this.canvas;
    const [a, b] = corners(this.getTransform(), x, y, x + w, y + h);
    if (a[0] <= 0.5 && a[1] <= 0.5 && b[0] >= c.width - 0.5 && b[1] >= c.height - 0.5) store.set(c, []);
    return clear.call(this, x, y, w, h);
  };
  for (const name of ["fillText", "strokeText"]) {
    const draw = proto[name];
    proto[name] = function (text, x, y, maxWidth) {
      const s = String(text);
      if (s.trim()) {
        const m = this.measureText(s);
        const squeeze = maxWidth !== undefined && m.width > maxWidth ? maxWidth / m.width : 1;
        const [lo, hi] = corners(
          this.getTransform(),
          x - m.actualBoundingBoxLeft * squeeze,
          y - m.actualBoundingBoxAscent,
          x + m.actualBoundingBoxRight * squeeze,
          y + m.actualBoundingBoxDescent,
        );
        if (!store.has(this.canvas)) store.set(this.canvas, []);
        store.get(this.canvas).push({ text: s, x0: lo[0], y0: lo[1], x1: hi[0], y1: hi[1] });
      }
      return draw.call(this, text, x, y, maxWidth);
    };
  }
}

/** The bounding box, under transform `m`, of the rectangle (x0, y0)-(x1, y1): [[minX, minY], [maxX, maxY]]. */
function corners(m, x0, y0, x1, y1) {
  const xs = [];
  const ys = [];
  for (const [x, y] of [
    [x0, y0],
    [x1, y0],
    [x0, y1],
    [x1, y1],
  ]) {
    xs.push(m.a * x + m.c * y + m.e);
    ys.push(m.b * x + m.d * y + m.f);
  }
  return [
    [Math.min(...xs), Math.min(...ys)],
    [Math.max(...xs), Math.max(...ys)],
  ];
}

/**
 * The boxes of the text on `canvas` now, in CSS pixels of its box on the page, with the canvas's
 * own size: {w, h, boxes: [{text, x0, y0, x1, y1}]} (for tests: see tests/browser/test_layout.py).
 */
export function textBoxesOf(store, canvas) {
  const r = canvas.getBoundingClientRect();
  const sx = canvas.width / Math.max(1, r.width);
  const sy = canvas.height / Math.max(1, r.height);
  const boxes = (store.get(canvas) || []).map((b) => ({ text: b.text, x0: b.x0 / sx, y0: b.y0 / sy, x1: b.x1 / sx, y1: b.y1 / sy }));
  return { w: r.width, h: r.height, boxes };
}
