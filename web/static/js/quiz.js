// Predict-then-reveal: the reader picks an answer, then the quiz's preset runs (fast) to the
// quiz's time and the answer computed at build time is revealed next to the live numbers.
import "./sim-element.js";

for (const box of document.querySelectorAll(".quiz[data-quiz]")) {
  const q = JSON.parse(box.dataset.quiz);
  const reveal = box.querySelector(".quiz-reveal");
  const host = box.querySelector(".quiz-sim");
  let started = false;
  for (const btn of box.querySelectorAll("[data-option]")) {
    btn.addEventListener("click", () => {
      if (started) return;
      started = true;
      for (const b of box.querySelectorAll("[data-option]")) {
        b.setAttribute("aria-pressed", String(b === btn));
        b.disabled = true;
      }
      run(q, btn.dataset.option, host, reveal);
    });
  }
}

async function run(q, guess, host, reveal) {
  const sim = document.createElement("contention-sim");
  sim.setAttribute("preset", q.preset);
  sim.setAttribute("panels", q.options.join(","));
  sim.setAttribute("speed", "10");
  sim.setAttribute("caption", "false");
  sim.setAttribute("controls", "basic");
  host.append(sim);
  // the run plays only while on screen (embed.js pauses a widget scrolled out of view): bring it
  // into view, or a reader whose quiz sits at the bottom of the window would wait for nothing
  sim.scrollIntoView({ block: "nearest" });
  reveal.hidden = false;
  reveal.textContent = `You picked ${guess}. Running ${q.preset} to t = ${q.at} s…`;
  const show = () => {
    const right = q.answer.includes(guess);
    const vals = Object.entries(q.values)
      .map(([n, v]) => `${n} ${typeof v === "number" ? +v.toPrecision(4) : v}`)
      .join(" · ");
    reveal.className = `quiz-reveal ${right ? "right" : "wrong"}`;
    reveal.textContent = `${right ? "Right" : "Not quite"}: ${q.answer.join(" and ")} (${q.metric.replaceAll("_", " ")} at ${q.at} s: ${vals}). ${q.explain || ""}`;
  };
  try {
    await sim.whenReady();
    if (q.at / 10 > 8) {
      // long runs: jump there instead of playing for minutes
      await sim.whenLive();
      await sim.seek(q.at);
      sim.pause();
      show();
      return;
    }
    sim.play();
    const tick = () => (sim.t >= q.at - 1e-9 ? (sim.pause(), show()) : requestAnimationFrame(tick));
    requestAnimationFrame(tick);
  } catch (err) {
    reveal.textContent = `The simulation could not run (${err.message}); the answer: ${q.answer.join(" and ")}.`;
  }
}
