"""Fixtures: real ``contention serve`` processes on 127.0.0.1.

``main_server`` (one per session) has two workers, a queue of two and a 300,000-event bound;
``tight_server`` has one worker, a 1 KB body limit and a 2 s run timeout.
"""

from __future__ import annotations

import httpx
import pytest

from .harness import Server, start_server, stop_server

MAIN_ENV = {
    "CONTENTION_WORKERS": "2",
    "CONTENTION_QUEUE": "2",
    "CONTENTION_MAX_EVENTS": "300000",
    "CONTENTION_MAX_DURATION": "100000",
    "CONTENTION_RUN_TIMEOUT": "60",
}
TIGHT_ENV = {
    "CONTENTION_WORKERS": "1",
    "CONTENTION_QUEUE": "1",
    "CONTENTION_MAX_BODY_BYTES": "1024",
    "CONTENTION_RUN_TIMEOUT": "2",
    "CONTENTION_MAX_DURATION": "10000000",
    "CONTENTION_MAX_EVENTS": "100000000",
}


@pytest.fixture(scope="session")
def main_server(tmp_path_factory) -> Server:
    server = start_server(tmp_path_factory.mktemp("main"), MAIN_ENV)
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def tight_server(tmp_path_factory) -> Server:
    server = start_server(tmp_path_factory.mktemp("tight"), TIGHT_ENV)
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def client(main_server) -> httpx.Client:
    with httpx.Client(base_url=main_server.url, timeout=60.0) as c:
        yield c
