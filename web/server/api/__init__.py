"""The JSON API of ``contention serve``: routes, request checks, the worker pool and GPU glue."""
