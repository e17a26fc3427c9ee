// The answer on "Serve a 70B model to 10,000 concurrent users" (topics/cluster/serve-70b/): the
// build planned one slice of users per GPU, SLO and router (sitebuild/capacity.py); this script
// multiplies the chosen cell by the slices, as capacity.answer does, and writes the same sentence
// as capacity.sentence. Nothing here runs a simulation.

const money = (x) => Math.round(x).toLocaleString("en-US");
const count = (x) => x.toLocaleString("en-US");

/** The answer for `users` on cell gpu/slo/router of `data` (capacity.answer's arithmetic). */
export function answer(data, users, gpu, slo, router) {
  const c = data.cells[`${gpu}/${slo}/${router}`];
  const slices = Math.floor(users / data.slice_users);
  if (!c.feasible) return { feasible: false, binding: c.binding, command: c.command };
  const per = c.config["defaults.replicas"];
  return {
    feasible: true,
    slices,
    replicasPerSlice: per,
    replicas: slices * per,
    gpus: slices * c.gpus,
    usdPerHour: slices * c.usd_per_hour,
    usdPerMonth: slices * c.usd_per_month,
    usdPerMtokOut: c.usd_per_mtok_out,
    command: c.command,
  };
}

/** capacity.sentence, word for word. */
export function sentence(data, users, gpu, slo, router, top) {
  const a = answer(data, users, gpu, slo, router);
  if (!a.feasible) return `${count(users)} users: no slice of up to ${top} replicas meets ${data.slos[slo].label}; ${a.binding} binds.`;
  const perReplica = Math.floor(a.gpus / a.replicas);
  return (
    `${count(users)} users: ${count(a.replicas)} replicas of ${perReplica} ${gpu} = ${count(a.gpus)} GPUs, ` +
    `$${money(a.usdPerHour)} an hour, $${money(a.usdPerMonth)} a month, ` +
    `$${a.usdPerMtokOut.toFixed(2)} per million output tokens ` +
    `(${a.slices} slices of ${count(data.slice_users)} users, ${a.replicasPerSlice} replicas each).`
  );
}

function probes(cell) {
  const items = [...cell.probes].sort((a, b) => a.replicas - b.replicas);
  return items.map((p) => {
    const bounds = Object.entries(p.bounds)
      .map(([t, b]) => `${t} bound ${+b.toPrecision(3)}`)
      .join(", ");
    const li = document.createElement("li");
    li.textContent = `${p.replicas} replicas: ${bounds}: ${p.ok ? "meets" : "misses"}`;
    return li;
  });
}

for (const box of document.querySelectorAll(".capacity[data-capacity]")) {
  const data = JSON.parse(box.dataset.capacity);
  const form = box.querySelector(".capacity-form");
  const out = box.querySelector(".capacity-answer b");
  const list = box.querySelector(".capacity-probes");
  const cmd = box.querySelector(".capacity-command");
  const top = box.dataset.top;
  const update = () => {
    const v = Object.fromEntries(new FormData(form));
    const users = Number(v.users);
    out.textContent = sentence(data, users, v.gpu, v.slo, v.router, top);
    const cell = data.cells[`${v.gpu}/${v.slo}/${v.router}`];
    list.replaceChildren(...probes(cell));
    cmd.textContent = cell.command;
  };
  form.addEventListener("change", update);
}
