// A concept page (docs/concepts.md): the hands-on steps and the quiz drive the figure through the
// element's public API only (restart, inject, choosePanels, seek, play, pause, step). The build
// computed each step's state (sims.core.concept_plan: the overrides, the injected actions, the
// panels and the time), and the tests checked each step's sentence and each quiz's answer against
// a run in CPython, so a button puts the figure exactly where its sentence says.
import { recordQuiz } from "./progress.js";

const data = JSON.parse(document.querySelector("script[data-concept]").textContent);
const sim = document.querySelector(".concept-fig contention-sim");
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const sleep = () => new Promise((r) => requestAnimationFrame(r));
let done = -1; // the last step applied, while the figure has not moved since
let doneAt = null; // the figure's time right after it

/** The concept's own panel, outlined, and the answer panel once a quiz reveals it. */
function mark(answer = null) {
  for (const fig of sim.querySelectorAll(".cs-panel[data-panel]")) {
    fig.classList.toggle("cs-focus", fig.dataset.panel === sim.dataset.focus);
    fig.classList.toggle("cs-answer", fig.dataset.panel === answer);
  }
}

/** Put the figure in `state`: {overrides, actions: [[index, t]], panels, t}. */
async function restore(state) {
  await sim.whenLive();
  sim.pause();
  const actions = sim.actions.map(([i, t]) => [i, Number(t.toFixed(3))]);
  if (!same(sim.overrides, state.overrides) || !same(actions, state.actions)) {
    await sim.restart(state.overrides);
    for (const [index, t] of state.actions) {
      await sim.seek(t);
      await sim.inject(index);
    }
  }
  if (!same(sim.panelNames, state.panels)) await sim.choosePanels(state.panels);
  if (state.t !== null) await sim.seek(state.t);
}

/** Play from where the figure is to `t`, then stop exactly there. */
async function playUntil(t) {
  if (sim.t < t) {
    sim.play();
    while (sim.t < t && sim.state === "running") await sleep();
  }
  sim.pause();
  await sim.seek(t);
}

/** Carry out step `k`'s action from the state before it; `live`: as the reader watches it. */
async function act(k, live) {
  const a = data.steps[k].action;
  const after = data.states[k];
  if ("seek" in a) await sim.seek(a.seek);
  else if ("play" in a) await (live ? playUntil(a.until) : sim.seek(a.until));
  else if ("step" in a) for (let i = 0; i < a.step; i++) await sim.step();
  else if ("panels" in a) await sim.choosePanels(a.panels);
  else if ("set" in a) {
    await sim.restart(after.overrides);
    await sim.seek(after.t);
  } else {
    await sim.seek(a.at);
    await sim.inject(a.inject);
    await sim.seek(after.t);
  }
}

/** Step `k`'s button: the state the steps before it left, then its own action. */
async function run(k) {
  await sim.whenLive();
  if (!(done === k - 1 && doneAt === sim.t && sim.state !== "running")) {
    let j = k - 1; // the nearest earlier state with a known time (a `step` leaves none)
    while (j >= 0 && data.states[j].t === null) j--;
    await restore(j >= 0 ? data.states[j] : data.initial);
    for (let i = j + 1; i < k; i++) await act(i, false);
  }
  await act(k, true);
  done = k;
  doneAt = sim.t;
  sim.dataset.step = String(k);
  mark();
}

function wireSteps() {
  for (const btn of document.querySelectorAll("[data-step-go]")) {
    const k = Number(btn.dataset.stepGo);
    const item = btn.closest("li");
    const note = item.querySelector(".step-note");
    btn.addEventListener("click", async () => {
      for (const b of document.querySelectorAll("[data-step-go]")) b.disabled = true;
      sim.scrollIntoView({ block: "nearest", behavior: "smooth" });
      note.textContent = "…";
      try {
        await run(k);
        note.textContent = `t = ${+sim.t.toFixed(4)} s`;
        for (const li of document.querySelectorAll("li[data-step]")) li.classList.toggle("current", li === item);
      } catch (err) {
        note.textContent = `Could not run this step: ${err.message || err}`;
      } finally {
        for (const b of document.querySelectorAll("[data-step-go]")) b.disabled = false;
      }
    });
  }
}

const show = (v) => (typeof v === "number" ? String(+v.toPrecision(4)) : String(v));

/** Quiz `k`: the figure as it opened, run to the quiz's time, the answer panel marked. */
async function reveal(k, guess, box) {
  const q = data.quiz[k];
  const out = box.querySelector(".quiz-reveal");
  out.hidden = false;
  out.textContent = `You picked ${guess}. Running the figure to t = ${q.at} s…`;
  sim.scrollIntoView({ block: "nearest", behavior: "smooth" });
  await restore({ ...data.initial, t: q.at });
  done = -1;
  const snap = await sim.snapshot();
  const values = data.initial.panels.map((n) => `${n} ${show(snap.panels[n]?.[q.metric])}`).join(" · ");
  const right = guess === q.answer;
  out.className = `quiz-reveal ${right ? "right" : "wrong"}`;
  out.textContent = `${right ? "Right" : "Not quite"}: ${q.answer} (${q.metric.replaceAll("_", " ")} at ${q.at} s: ${values}). ${q.explain}`;
  mark(q.answer);
  sim.dataset.answer = q.answer;
  recordQuiz(`${data.slug}#${k}`, guess, right);
}

function wireQuiz() {
  for (const box of document.querySelectorAll("[data-concept-quiz]")) {
    const k = Number(box.dataset.conceptQuiz);
    for (const btn of box.querySelectorAll("[data-option]")) {
      btn.addEventListener("click", () => {
        for (const b of box.querySelectorAll("[data-option]")) {
          b.setAttribute("aria-pressed", String(b === btn));
          b.disabled = true;
        }
        reveal(k, btn.dataset.option, box).catch((err) => (box.querySelector(".quiz-reveal").textContent = String(err.message || err)));
      });
    }
  }
}

if (sim) {
  sim.addEventListener("cs-state", () => mark(sim.dataset.answer || null));
  sim.whenReady().then(
    () => mark(),
    () => {},
  );
  wireSteps();
  wireQuiz();
}
