// Labels of injected actions for the charts' marks: a preset's numbered "break it" action, or a
// fault drawn on a node view (faults.js). Kept apart from faults.js so that the element, and so
// every embed, loads only this; faults.js comes with the consensus and replication renderers.

export const HEAL = "h";

/**
 * A readable label of an action: a preset's numbered action or a drawn key (servers named as the
 * topic's view names them: S1.. in consensus, n0.. elsewhere).
 */
export function actionLabel(meta, a) {
  if (typeof a !== "string") return meta?.actions?.[a]?.label || "action";
  const name = (i) => (meta?.topic === "consensus" ? `S${Number(i) + 1}` : `n${i}`);
  if (a === HEAL) return "heal";
  if (a[0] === "c") return `crash ${name(a.slice(1))}`;
  if (a[0] === "r") return `restart ${name(a.slice(1))}`;
  const groups = a.slice(1).split("-");
  return `partition ${groups.map((g) => `{${g.split(".").map(name).join(", ")}}`).join(" | ")}`;
}
