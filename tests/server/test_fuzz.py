"""Generated bad input against the real server: always a 4xx JSON error naming the field, never
a 5xx. Wrong types, negative or huge durations, huge seeds, unknown presets and panels, unknown
fields, malformed JSON, and arbitrary JSON values."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sims.core import presets
from web.server.config import MAX_SEED

pytestmark = pytest.mark.slow  # real server processes and timeouts: `make test` runs it, `make check` does not

PRESET = "ratelimit-burst"
NAMES = set(presets.preset_names())
PANELS = presets.load(PRESET).panel_names()
SETTINGS = settings(
    max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)

json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# null means "absent" (the preset's own seed, duration, panels), so it is never a bad value here
not_int = json_values.filter(lambda v: v is not None and (isinstance(v, bool) or not isinstance(v, int)))
not_number = json_values.filter(lambda v: v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))))

BAD = {
    "preset": st.one_of(
        json_values.filter(lambda v: not isinstance(v, str)),
        st.text(max_size=40).filter(lambda s: s not in NAMES),
    ),
    "seed": st.one_of(
        not_int,
        st.integers(max_value=-1),
        st.integers(min_value=MAX_SEED + 1, max_value=10**300),
    ),
    "duration": st.one_of(
        not_number,
        st.floats(max_value=0, allow_nan=False, allow_infinity=False),
        st.integers(max_value=0),
        st.floats(min_value=100001, allow_infinity=False),
        st.integers(min_value=100001, max_value=10**400),
    ),
    "panels": st.one_of(
        json_values.filter(lambda v: v is not None and not isinstance(v, list)),
        st.just([]),
        st.lists(json_values.filter(lambda v: not isinstance(v, str)), min_size=1, max_size=3),
        st.lists(st.text(max_size=12).filter(lambda s: s not in PANELS), min_size=1, max_size=3),
        st.lists(st.sampled_from(PANELS), min_size=2, max_size=4).filter(lambda v: len(set(v)) < len(v)),
    ),
}


@st.composite
def one_bad_field(draw) -> tuple[dict, str]:
    body = {"preset": PRESET, "seed": draw(st.integers(0, 1000)), "duration": draw(st.sampled_from([0.5, 1, 2.5]))}
    field = draw(st.sampled_from([*BAD, "unknown"]))
    if field == "unknown":
        field = draw(st.text(max_size=10).filter(lambda k: k not in body and k != "panels"))
        body[field] = draw(json_values)
    else:
        body[field] = draw(BAD[field])
    return body, field


def assert_error(r, field: str | None = None) -> None:
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    err = r.json()
    assert isinstance(err["error"], str) and err["error"]
    assert isinstance(err["field"], str) and err["field"]
    if field is not None:
        assert err["field"] == (field[:80] or "body"), err


@SETTINGS
@given(one_bad_field())
@example(({"preset": PRESET, "seed": 2**64}, "seed"))
@example(({"preset": PRESET, "seed": True}, "seed"))
@example(({"preset": PRESET, "seed": 7.0}, "seed"))
@example(({"preset": PRESET, "duration": -1}, "duration"))
@example(({"preset": PRESET, "duration": 1e308}, "duration"))
@example(({"preset": "../../etc/passwd"}, "preset"))
@example(({"preset": PRESET, "panels": "fixed_window"}, "panels"))
def test_run_bad_field_is_named(client, case):
    body, field = case
    assert_error(client.post("/api/run", json=body), field)


@SETTINGS
@given(one_bad_field())
def test_gpu_replay_bad_field_is_named(client, case):
    body, field = case
    if field == "panels":  # replay takes no panels: the field is refused as unknown, by name
        body["panels"] = PANELS[:1]
    assert_error(client.post("/api/gpu/replay", json=body), field)


malformed = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
    st.sampled_from(
        [
            b"",
            b" ",
            b"{",
            b'{"preset": "ratelimit-burst",}',
            b"NaN",
            b'{"duration": Infinity}',
            b"[" * 5000,
            b'{"seed": ' + b"9" * 5000 + b"}",
            b"\xff\xfe{}",
            b"null",
        ]
    ),
)


@SETTINGS
@given(malformed)
def test_malformed_or_non_object_body_is_4xx_about_the_body(client, raw):
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        value = None
    r = client.post("/api/run", content=raw, headers={"content-type": "application/json"})
    if not isinstance(value, dict):
        assert_error(r, "body")
    elif r.status_code != 200:  # an object after all: it is judged field by field
        assert_error(r)


@SETTINGS
@given(json_values)
def test_any_json_value_is_answered_without_a_5xx(client, value):
    r = client.post("/api/run", json=value)
    if r.status_code != 200:
        assert_error(r)


@SETTINGS
@given(
    st.dictionaries(st.sampled_from(["seed", "duration", "x"]), st.text(max_size=30), max_size=3),
    st.sampled_from([PRESET, "nope", "%2e%2e", "ratelimit-burst%00"]),
)
def test_trace_query_is_answered_without_a_5xx(client, params, preset):
    r = client.get(f"/api/trace/{preset}", params=params)
    if r.status_code != 200:
        assert_error(r)
