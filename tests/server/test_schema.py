"""schemathesis against the served OpenAPI document: a bounded number of generated requests per
operation, each answered without a 5xx (the one documented 503, a GPU replay on a server
without a GPU, excepted), with the documented content type and a body that fits the schema. ``SCHEMA_EXAMPLES`` (default 40 per operation) sets the bound."""

from __future__ import annotations

import json
import os

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from web.server.api.openapi import openapi
from web.server.config import Limits

from .harness import start_server, stop_server

pytestmark = pytest.mark.slow  # real server processes and timeouts: `make test` runs it, `make check` does not

# small bounds, so that every generated run is quick: long durations are refused (422)
ENV = {
    "CONTENTION_WORKERS": "2",
    "CONTENTION_MAX_DURATION": "5",
    "CONTENTION_MAX_EVENTS": "50000",
    "CONTENTION_RUN_TIMEOUT": "10",
}
DOC = openapi(Limits.from_env(ENV))
schema = schemathesis.openapi.from_dict(DOC)
EXAMPLES = int(os.environ.get("SCHEMA_EXAMPLES", "40"))


@pytest.fixture(scope="module")
def api_server(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp("schema"), ENV)
    yield server
    stop_server(server)


def test_the_tested_document_is_the_served_one(api_server):
    assert httpx.get(f"{api_server.url}/api/openapi.json").json() == json.loads(json.dumps(DOC))


@pytest.mark.timeout(40)
@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_no_5xx(case, api_server):
    r = case.call(base_url=api_server.url, timeout=30)
    case.validate_response(r, checks=[response_schema_conformance, content_type_conformance])
    if case.path == "/api/gpu/replay" and r.status_code == 503:
        assert r.json()["field"] == "gpu"  # documented: no GPU on this server
        return
    assert r.status_code < 500, (case.method, case.path, r.status_code, r.text[:300])
    if r.status_code >= 400:
        body = r.json()
        assert isinstance(body["error"], str) and isinstance(body["field"], str)
