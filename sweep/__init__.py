"""Parameter sweeps over seeds, and capacity planning on top of them.

A sweep is a grid of cells (one value per swept key) times N seeds. Each (cell, seed) runs the
preset with the cell's overrides and yields one row per panel, ``{"params", "seed", "panel",
"metrics", "error"}``: a row depends only on (preset, params, seed), so any executor (a local
process pool, a Ray cluster) and any order of completion give the same rows. The simulation
itself is ``sims``; this package adds what sims/ may not hold: processes, files, wall time.
"""
