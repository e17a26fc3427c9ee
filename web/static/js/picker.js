// The panel picker: a checkbox per panel of the preset, the claim's on by default (meta.js),
// the others one click away; a change reruns the shown panels at the current time.
import { el } from "./sim-ui.js";

/** Checkboxes for the panels: the claim's are on by default, the others one click away. */
export function panelPicker(sim) {
  const box = el("fieldset", { class: "cs-picker" }, el("legend", { text: "Panels" }));
  for (const p of sim.meta.panels) {
    const on = sim.panelNames.includes(p.name);
    const input = el("input", {
      type: "checkbox",
      value: p.name,
      checked: on,
      onchange: () => {
        const chosen = [...box.querySelectorAll("input:checked")].map((i) => i.value);
        if (!chosen.length) {
          input.checked = true; // at least one panel
          return;
        }
        sim.choosePanels(chosen).catch(() => {});
      },
    });
    box.append(el("label", { class: "cs-pick", style: `--cs-panel-color:${sim.colorOf(p.name)}` }, input, el("span", { text: p.name })));
  }
  return box;
}
