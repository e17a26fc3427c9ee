"""Tests of `contention serve` (a package, so its conftest never shadows tests/conftest.py)."""
