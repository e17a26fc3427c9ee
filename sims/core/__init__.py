"""The simulation core: virtual clock, seeded randomness and portable math, the shared stream,
metrics, registries, presets and scenarios. Standard library only."""
