// The reader's progress, kept in this browser only (localStorage; no account, no server):
// completed lessons, quiz answers and the last lesson opened in each track. Any page may load
// this module: it wires what the page has ([data-complete] buttons, [data-progress-of] marks,
// [data-track-progress] summaries, the lesson bars, export / import / clear) and exports the
// store for concept.js (quiz answers).

const KEY = "contention.progress";
const VERSION = 1;

const empty = () => ({ version: VERSION, completed: {}, quiz: {}, tracks: {} });

/** The stored progress; a missing or unreadable record reads as empty. */
export function load() {
  try {
    const p = JSON.parse(localStorage.getItem(KEY) || "null");
    return valid(p) ? p : empty();
  } catch {
    return empty();
  }
}

const isMap = (x) => x !== null && typeof x === "object" && !Array.isArray(x);
const valid = (p) => isMap(p) && p.version === VERSION && isMap(p.completed) && isMap(p.quiz) && isMap(p.tracks);

function save(p) {
  localStorage.setItem(KEY, JSON.stringify(p));
  document.dispatchEvent(new CustomEvent("cs-progress"));
}

/** Change the stored progress with `fn(p)`, then save it. */
export function update(fn) {
  const p = load();
  fn(p);
  save(p);
}

export const isComplete = (slug) => Boolean(load().completed[slug]);
export const setComplete = (slug, done) =>
  update((p) => {
    if (done) p.completed[slug] = new Date().toISOString().slice(0, 10);
    else delete p.completed[slug];
  });
export const recordQuiz = (key, answer, right) => update((p) => (p.quiz[key] = { answer, right }));

/** Replace the stored progress with an exported file's `text`; throws on anything else. */
export function importText(text) {
  const p = JSON.parse(text);
  if (!valid(p)) throw new Error("not a Contention progress file");
  save(p);
}

// -- the page --------------------------------------------------------------------------------
const activeTrack = () => new URLSearchParams(location.search).get("track");

/** Lesson bars: the track the reader came from (?track=), else the last one they were in. */
function showLessonBars() {
  const bars = [...document.querySelectorAll(".lesson-bar[data-track]")];
  if (!bars.length) return;
  const p = load();
  const want = activeTrack();
  const slug = document.querySelector("[data-complete]")?.dataset.complete;
  const recent = bars.map((b) => b.dataset.track).filter((t) => p.tracks[t]);
  const pick = bars.find((b) => b.dataset.track === want) || bars.find((b) => b.dataset.track === recent[0]) || bars[0];
  for (const b of bars) b.hidden = b !== pick;
  if (slug && want === pick.dataset.track) update((q) => (q.tracks[want] = slug)); // the last position
}

function render() {
  const p = load();
  for (const btn of document.querySelectorAll("[data-complete]")) {
    const done = Boolean(p.completed[btn.dataset.complete]);
    btn.setAttribute("aria-pressed", String(done));
    btn.textContent = done ? "✓ Completed" : "Mark complete";
  }
  for (const mark of document.querySelectorAll("[data-progress-of]")) mark.hidden = !p.completed[mark.dataset.progressOf];
  for (const el of document.querySelectorAll("[data-track-progress], [data-topic-progress]")) {
    const lessons = el.dataset.lessons.split(" ").filter(Boolean);
    const n = lessons.filter((s) => p.completed[s]).length;
    el.textContent = `${n} of ${lessons.length} complete`;
    el.dataset.done = String(n);
  }
  for (const a of document.querySelectorAll("[data-track-resume]")) {
    const last = p.tracks[a.dataset.trackResume];
    const item = last && document.querySelector(`[data-lesson="${CSS.escape(last)}"] a`);
    if (item) {
      a.href = item.href;
      a.textContent = "Continue";
    }
  }
}

function wire() {
  for (const btn of document.querySelectorAll("[data-complete]")) {
    btn.addEventListener("click", () => {
      const done = !isComplete(btn.dataset.complete);
      setComplete(btn.dataset.complete, done);
      const note = document.querySelector("[data-complete-note]");
      if (note) note.textContent = done ? "Saved in this browser." : "";
    });
  }
  const note = document.querySelector("[data-progress-note]");
  const say = (text) => note && (note.textContent = text);
  document.querySelector("[data-progress-export]")?.addEventListener("click", () => {
    const blob = new Blob([JSON.stringify(load(), null, 1)], { type: "application/json" });
    const a = Object.assign(document.createElement("a"), { href: URL.createObjectURL(blob), download: "contention-progress.json" });
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    say("Exported.");
  });
  document.querySelector("[data-progress-import]")?.addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    try {
      importText(await file.text());
      say(`Imported ${file.name}.`);
    } catch (err) {
      say(`Cannot import ${file.name}: ${err.message}`);
    }
    e.target.value = "";
  });
  document.querySelector("[data-progress-clear]")?.addEventListener("click", () => {
    if (!confirm("Clear your progress in this browser?")) return;
    localStorage.removeItem(KEY);
    document.dispatchEvent(new CustomEvent("cs-progress"));
    say("Cleared.");
  });
  document.addEventListener("cs-progress", render);
  window.addEventListener("storage", (e) => e.key === KEY && render()); // another tab
}

showLessonBars();
wire();
render();
