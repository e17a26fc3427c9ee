"""Workload generators: each a pure function of (params, rng, duration) yielding events in time
order. Modules here register themselves with ``@registry.workload(kind, **params)`` and are
discovered on first use; add a file to add a generator."""
