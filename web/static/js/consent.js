// Code that arrives in a link (edit.BASE=CODE in the hash) runs only once the reader has seen it
// and said yes. Until then the element shows, in place of the simulation, what the link carries:
// each edited policy's source, "Run it" and "Open without it" (which plays the preset as written;
// the page's link then carries no edit). Edits the reader ran in this tab, their own or ones they
// accepted, are remembered in sessionStorage (this tab only), so a reload asks no second time.
// Even after a yes, edited code runs in a worker of its own that cannot reach other origins
// (edited.js); docs/editing.md says what that boundary is and is not.
import { el } from "./sim-ui.js";
import { discardPrestarted, prestart } from "./edited.js";

const KEY = "contention:edits-run";
const KEEP = 20; // edits remembered per tab

function ran() {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) || "[]");
  } catch {
    return []; // storage off (a sandboxed frame, a browser setting): every link asks
  }
}

/** Remember that the reader ran these edits in this tab (their own, from the editor, or accepted). */
export function remember(edits) {
  const codes = ran().filter((c) => !edits.some((e) => e.code === c));
  try {
    sessionStorage.setItem(KEY, JSON.stringify([...codes, ...edits.map((e) => e.code)].slice(-KEEP)));
  } catch {}
}

/** The edits of a link to run: all once the reader says yes (or ran them in this tab before), else none. */
export async function consent(sim, edits) {
  const seen = ran();
  if (edits.every((e) => seen.includes(e.code))) return edits;
  prestart(); // Pyodide starts meanwhile in the edited policies' worker; nothing of the link runs
  const yes = await ask(sim, edits);
  if (yes) remember(edits);
  else discardPrestarted();
  return yes ? edits : [];
}

function ask(sim, edits) {
  return new Promise((resolve) => {
    const few = edits.length === 1 ? "an edited policy" : `${edits.length} edited policies`;
    const bases = edits.map((e) => `“${e.base}”`).join(", ");
    const heading = el("h2", { id: `${sim.simId}-consent`, tabindex: "-1", text: `This link carries ${few}` });
    const codes = edits.map((e) =>
      el(
        "details",
        { open: true },
        el("summary", { text: `Show it: ${e.name}, ${e.source.split("\n").length} lines of Python` }),
        el("pre", { class: "cs-consent-code", "data-consent-code": e.base }, el("code", { text: e.source })),
      ),
    );
    const done = (yes) => {
      box.remove();
      sim.status.hidden = false;
      resolve(yes);
    };
    const box = el(
      "section",
      { class: "cs-consent", role: "dialog", "aria-labelledby": heading.id, "data-consent": "" },
      heading,
      el("p", {
        text:
          `Whoever made this link changed the code of the panel ${bases}. It is Python that runs in this page ` +
          "only if you say so. It would run in a worker of its own that cannot reach other sites or a trace you " +
          "drop here, but it decides what that panel shows: read it first.",
      }),
      ...codes,
      el(
        "p",
        { class: "cs-consent-bar" },
        el("button", { type: "button", class: "cs-btn cs-primary", "data-consent-run": "", text: "Run it", onclick: () => done(true) }),
        el("button", { type: "button", class: "cs-btn", "data-consent-skip": "", text: "Open without it", onclick: () => done(false) }),
      ),
    );
    sim.status.hidden = true;
    sim.root.append(box);
    sim.dataset.consent = "asking"; // tests and styles: the element waits for the reader
    heading.focus({ preventScroll: true });
  }).finally(() => delete sim.dataset.consent);
}
