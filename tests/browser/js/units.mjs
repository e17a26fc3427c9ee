// Unit checks of the front end's pure modules under Node (no browser): the URL codec, the palette,
// ticks and tick labels, the windowed ratios and the site search's ranking. Run by
// tests/browser/test_js_units.py.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ceilTime, formatActions, linkHash, parseActions, parseOverrides } from "../../../web/static/js/link.js";
import { panelColors } from "../../../web/static/js/palette.js";
import { formatTick, metricInfo, niceRange, niceTicks } from "../../../web/static/js/metrics.js";
import { bill, verdict } from "../../../web/static/js/claim.js";
import { ChartData } from "../../../web/static/js/chart-data.js";
import { recentWindow } from "../../../web/static/js/chart-marks.js";
import { search } from "../../../web/static/js/site-search.js";
import { readZip, writeFiles } from "../../../web/static/js/unzip.js";

test("links round-trip and keep times on the millisecond", () => {
  assert.deepEqual(parseOverrides("workload.rate=5;defaults.size=50;x=abc"), { "workload.rate": 5, "defaults.size": 50, x: "abc" });
  assert.deepEqual(
    parseActions(
      formatActions([
        [0, 12.5],
        [1, 7.123456],
      ]),
    ),
    [
      [0, 12.5],
      [1, 7.123],
    ],
  );
  assert.equal(ceilTime(12.5001), 12.501);
  assert.equal(ceilTime(12.5), 12.5);
  const h = linkHash({ seed: 8, speed: 2, t: 12.50004, panels: ["a", "b"], defaultPanels: ["a", "b"], overrides: {}, actions: [[0, 3.2]] });
  assert.equal(h, "seed=8&speed=2&t=12.5&actions=0@3.2");
  assert.match(
    linkHash({ seed: 1, speed: 1, t: 0, panels: ["b"], defaultPanels: ["a", "b"], overrides: { "defaults.size": 3 }, actions: [] }),
    /panels=b&o.defaults.size=3/,
  );
});

test("a found workload (a JSON table) round-trips through the link", () => {
  const workload = { kind: "sequence", rate: 3.3333333333333335, keys: [1, 2, 3, 4, 1, 2, 5] };
  const h = linkHash({ seed: 1, speed: 1, t: 0, panels: [], defaultPanels: [], overrides: { workload, "defaults.size": 3 }, actions: [] });
  const back = {};
  for (const [k, v] of new URLSearchParams(h)) if (k.startsWith("o.")) back[k.slice(2)] = v;
  const attr = Object.entries(back)
    .map(([k, v]) => `${k}=${v}`)
    .join(";"); // what play.html puts in the element's overrides attribute
  assert.deepEqual(parseOverrides(attr), { workload, "defaults.size": 3 });
  assert.equal(parseOverrides("x=[1,2")["x"], "[1,2"); // not JSON: kept as text
});

test("panel colours never repeat, at any count, light and dark", () => {
  for (const dark of [false, true])
    for (let n = 1; n <= 40; n++) {
      const c = panelColors(n, dark);
      assert.equal(new Set(c).size, n, `${n} panels, dark=${dark}`);
    }
});

test("at least three nice ticks, and labels that fit", () => {
  for (const [lo, hi] of [
    [0.4, 0.41],
    [0, 1],
    [0, 100000],
    [3, 3],
    [0, 0],
    [1.02, 1.13],
    [-5, 5],
  ]) {
    const [a, b] = niceRange(lo, hi, "count");
    assert.ok(a <= lo && b >= hi && b > a, `${lo}..${hi} -> ${a}..${b}`);
    assert.ok(niceTicks(a, b).ticks.length >= 3, `${a}..${b}`);
  }
  assert.deepEqual(niceTicks(...niceRange(0, 1, "count", true), 4, 3, true).ticks, [0, 1, 2]); // whole counts
  // one value seen through float rounding is a flat line: a step of 1e-17 never moved a tick off
  // 0.3, and the loop grew its array until the engine gave up (a chart froze its tab for 20 s)
  for (const [lo, hi] of [
    [0.3, 0.1 + 0.2],
    [1e9, 1e9 + 1e-7],
    [-2.5, -2.5 + 4e-16],
  ]) {
    const [a, b] = niceRange(lo, hi, "count");
    assert.ok(a <= lo && b >= hi && b - a > Math.abs(lo) * 1e-3, `${lo}..${hi} -> ${a}..${b}`);
    const { ticks } = niceTicks(lo, hi);
    assert.ok(ticks.length >= 3 && ticks.length < 20, `${lo}..${hi}: ${ticks.length} ticks`);
  }
  assert.equal(formatTick(100000, "count", 20000), "100k");
  assert.equal(formatTick(10000, "count", 2000), "10k");
  assert.equal(formatTick(0.45, "ratio", 0.05), "45%");
  assert.equal(formatTick(0.005, "ratio", 0.0025), "0.50%");
  assert.equal(metricInfo("hit_ratio@recent").title, "hit ratio, recent");
  assert.equal(metricInfo("max_in_any_window").title, "max in any window"); // a metric of its own
  assert.equal(metricInfo("p99_latency").unit, "s");
  assert.equal(metricInfo("max_load_ratio", { max_load_ratio: { unit: "×", format: "number" } }).unit, "×");
});

test("a recent ratio is the counters' difference over the window", () => {
  const d = new ChartData(["hit_ratio"], ["lru"], ["hit_ratio", "hits", "requests"], { hit_ratio: ["hits", "requests"] }, 20);
  assert.equal(d.windowSeconds, 1);
  // cumulative: 10 hits of 10 requests by t=1, then no hits for the next 10 requests
  d.apply({
    from: 0,
    rows: [
      [0, { lru: [0, 0, 0] }],
      [0.5, { lru: [1, 5, 5] }],
      [1, { lru: [1, 10, 10] }],
      [1.5, { lru: [0.67, 10, 15] }],
      [2, { lru: [0.5, 10, 20] }],
    ],
  });
  assert.deepEqual(d.values("hit_ratio@recent", 0), [null, 1, 1, 0.5, 0]);
  assert.deepEqual(d.values("hit_ratio", 0), [0, 1, 1, 0.67, 0.5]);
  assert.deepEqual(d.display(true), ["hit_ratio@recent"]);
  d.apply({ from: 2, rows: [] }); // a seek back truncates
  assert.equal(d.xs.length, 2);
  d.apply({ from: 2, rows: [[1, { lru: [10, 1] }]], columns: ["requests", "hit_ratio"] }); // by name
  assert.deepEqual([d.values("hit_ratio", 0)[2], d.values("requests", 0)[2], d.values("hits", 0)[2]], [1, 10, null]);
});

test("a latency draws nothing until something has completed", () => {
  const d = new ChartData(["ttft_p90"], ["a"], ["ttft_p90"], {}, 10, { noZero: ["ttft_p90"] });
  d.apply({
    from: 0,
    rows: [
      [0, { a: [0] }],
      [1, { a: [0] }],
      [2, { a: [0.3] }],
      [3, { a: [0] }],
    ],
  });
  assert.deepEqual(d.values("ttft_p90", 0), [null, null, 0.3, 0]);
});

test("the recent window fits between the workload's marks once they are apart, never under three samples", () => {
  const scans = Array.from({ length: 261 }, (_, k) => ({ t: 0.121 + 0.23 * k, label: "scan starts", kind: "workload" }));
  assert.equal(recentWindow(scans, 0, 60, 400, 0.05), 3); // crowded over the whole run: a twentieth of it
  assert.ok(Math.abs(recentWindow(scans, 8, 10, 400, 0.05) - 0.15) < 1e-9); // apart, but 3 samples of 0.05 s
  assert.ok(Math.abs(recentWindow(scans, 8, 10, 400, 0.01) - 0.1) < 1e-9); // a twentieth of 2 s < half a gap
  assert.ok(Math.abs(recentWindow(scans, 0, 4, 1000, 0.01) - 0.115) < 1e-9); // half the gap between scans
  const events = [{ t: 5, label: "node joins", kind: "event" }]; // events never narrow it
  assert.equal(recentWindow(events, 0, 20, 400, 0.2), 1);
});

test("the search matches word starts, ranks titles first and concepts among equals, and filters", () => {
  const e = (k, t, g = [], x = "", s = "") => ({ k, t, s, u: t, g, x });
  const index = [
    e("preset", "A negative edge fools Dijkstra; Bellman-Ford gets it right", ["graphs"]),
    e("concept", "Bellman-Ford", ["graphs", "shortest paths"], "bellman ford graphs"),
    e("topic", "Graphs", ["graphs"], "graphs", "Bellman-Ford and friends"),
    e("preset", "Reserving max_tokens returns 429s", ["rate limits"], "tpm"),
  ];
  assert.deepEqual(
    search(index, "bellman").map((r) => r.t),
    ["Bellman-Ford", "A negative edge fools Dijkstra; Bellman-Ford gets it right", "Graphs"],
  );
  assert.equal(search(index, "429")[0].t, "Reserving max_tokens returns 429s");
  assert.deepEqual(search(index, "bellman zzz"), []); // every word must match
  assert.deepEqual(
    search(index, "bellman", { kinds: ["preset"] }).map((r) => r.k),
    ["preset"],
  );
  assert.equal(search(index, "", { tag: "rate limits" }).length, 1);
});

test("the claim in a run's numbers: a bill for dollars, the metric's words otherwise", () => {
  const bill = { metric: "usd_per_mtok_out", panels: ["precise_prefix", "random"], at: 45, margin: 0.3 };
  assert.equal(
    verdict(bill, 45.04, { precise_prefix: 2.18, random: 2.73 }, {}),
    "At 45.0 s, random pays $2.73 per million output tokens and precise_prefix $2.18: 1.25× as much, for the same traffic.",
  );
  assert.match(verdict(bill, 10, { precise_prefix: 2, random: 3 }, {}), /The claim is judged at 45 s\.$/);
  assert.equal(verdict(bill, 50, { precise_prefix: 2.18 }, {}), null); // a panel turned off
  const hits = { metric: "hit_ratio", panels: ["s3fifo", "lru"], at: 30 };
  assert.equal(verdict(hits, 30, { s3fifo: 0.5, lru: 0.25 }, {}), "At 30.0 s, hit ratio: s3fifo 50.0%, lru 25.0%; lru is 0.50× s3fifo.");
});

test("the bill beside a claim that is not in dollars: the worst panel against the best", () => {
  const claim = { metric: "throughput_tok_s", panels: ["precise_prefix", "estimated_prefix", "random"], at: 120 };
  assert.equal(
    bill(claim, 120, { precise_prefix: 2.29, estimated_prefix: 2.31, random: 3.8 }),
    "At 120.0 s, random pays $3.80 per million output tokens and precise_prefix $2.29: 1.66× as much, for the same traffic.",
  );
  assert.equal(bill({ ...claim, metric: "usd_per_mtok_out" }, 120, { precise_prefix: 2, random: 3 }), null);
  assert.equal(bill(claim, 120, { precise_prefix: 2.29 }), null);
});

test("sims.zip is read in JavaScript: stored and deflated entries, no directories, no path out of /app", async () => {
  // zipfile's: a directory entry, sims/a.py deflated ("x = 1\n" 20 times), sims/b.toml stored
  const zip = Buffer.from(
    "UEsDBBQAAAAAAAAAIQAAAAAAAAAAAAAAAAAFAAAAc2ltcy9QSwMEFAAAAAgAC2KDXQ5rfckLAAAAeAAAAAkAAABzaW1zL2EucHmrULBVMOSqoDsJAFBLAwQUAAAAAAALYoNdBr0bQwgAAAAIAAAACwAAAHNpbXMvYi50b21sayA9ICJ2IgpQSwECFAMUAAAAAAAAACEAAAAAAAAAAAAAAAAABQAAAAAAAAAAAAAAgAEAAAAAc2ltcy9QSwECFAMUAAAACAALYoNdDmt9yQsAAAB4AAAACQAAAAAAAAAAAAAAgAEjAAAAc2ltcy9hLnB5UEsBAhQDFAAAAAAAC2KDXQa9G0MIAAAACAAAAAsAAAAAAAAAAAAAAIABVQAAAHNpbXMvYi50b21sUEsFBgAAAAADAAMAowAAAIYAAAAAAA==",
    "base64",
  );
  const files = await readZip(new Uint8Array(zip));
  const text = new TextDecoder();
  assert.deepEqual(
    files.map(([name, data]) => [name, text.decode(data)]),
    [
      ["sims/a.py", "x = 1\n".repeat(20)],
      ["sims/b.toml", 'k = "v"\n'],
    ],
  );
  const written = [];
  const dirs = [];
  writeFiles({ mkdirTree: (d) => dirs.push(d), writeFile: (p, d) => written.push([p, d.length]) }, files, "/app");
  assert.deepEqual(dirs, ["/app/sims"]);
  assert.deepEqual(written, [
    ["/app/sims/a.py", 120],
    ["/app/sims/b.toml", 8],
  ]);
  const evil = Buffer.from(
    "UEsDBBQAAAAAAAtig137OSuCAwAAAAMAAAAKAAAALi4vZXZpbC5weWJhZFBLAQIUAxQAAAAAAAtig137OSuCAwAAAAMAAAAKAAAAAAAAAAAAAACAAQAAAAAuLi9ldmlsLnB5UEsFBgAAAAABAAEAOAAAACsAAAAAAA==",
    "base64",
  );
  await assert.rejects(readZip(new Uint8Array(evil)), /unsafe path \.\.\/evil\.py/);
  await assert.rejects(readZip(new Uint8Array(zip.subarray(0, 60))), /no end of central directory/);
});
