// Panel colours: one per panel, never repeated within a page whatever the panel count, and safe
// for the common colour-vision deficiencies for the first six (Okabe & Ito's set, without its
// yellow on white, and without its black, which is the text's colour), then Paul Tol's muted set;
// past those, hues step by the golden angle. Lines also differ by dash (DASHES) and carry their
// names at their ends, so colour is never the only cue.

const LIGHT = [
  "#0072b2", // blue
  "#d55e00", // vermillion
  "#009e73", // bluish green
  "#cc79a7", // reddish purple
  "#e69f00", // orange
  "#56b4e9", // sky blue
  // brown (not black: the text is near black)
  "#8c5a2b",
  "#882255", // wine
  "#999933", // olive
  "#332288", // indigo
  "#44aa99", // teal
];
const DARK = [
  "#56b4e9", // sky blue
  "#f0894a", // vermillion, lighter
  "#2fc497", // bluish green
  "#e69bc6", // reddish purple
  "#f0e442", // yellow
  "#8fa8ff", // periwinkle
  // tan (not white: the text is near white)
  "#d9a46c",
  "#dd7799", // rose
  "#bbcc33", // pear
  "#aa99ee", // lavender
  "#44bb99", // mint
];

/** Stroke dashes by panel index: solid first, then patterns that let a line under another show. */
export const DASHES = [[], [7, 4], [2, 3], [10, 3, 2, 3], [4, 4], [1, 2], [12, 4], [6, 2, 1, 2], [3, 6], [8, 8]];

/** Whether the page is dark: the site's theme toggle (web/static/js/theme.js), else the system's. */
export function siteDark() {
  const t = document.documentElement.dataset.theme;
  return t === "dark" || t === "light" ? t === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
}

/** `n` distinct colours for the panels of one page, in panel order. */
export function panelColors(n, dark = false) {
  const base = dark ? DARK : LIGHT;
  const out = base.slice(0, n);
  for (let i = out.length; i < n; i++) {
    const hue = Math.round((i * 137.508) % 360);
    out.push(dark ? `hsl(${hue} 70% 68%)` : `hsl(${hue} 65% 38%)`);
  }
  return out;
}

export const dashFor = (k) => DASHES[k % DASHES.length];

/**
 * Colours for things inside a panel's view (heap blocks, nodes, keys): pale and distinct from the
 * panel colours, so that a panel's colour only ever means that panel (Paul Tol's light set).
 */
export const KEY_COLORS = [
  "#77aadd",
  "#ee8866",
  "#eedd88",
  "#ffaabb",
  "#99ddff",
  "#44bb99",
  "#bbcc33",
  "#aaaa00",
  "#c4a9e8",
  "#e8b78f",
  "#9fc9a6",
  "#cfcfcf",
];
