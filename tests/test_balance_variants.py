"""ip_hash against nginx's hash written out by hand, weighted least connections against nginx's
rule, least response time's average, and the ip_hash preset's skew."""

from __future__ import annotations

from collections import defaultdict

from sims.balance import make_panel
from sims.core import api, presets, stream
from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, resolve_params
from sims.core.scenario import Scenario


def _panel(policy: str, **params):
    cls = get_policy("balance", policy)
    specs = dict(load_topic("balance").panel_params) | dict(cls.PARAMS)
    return make_panel(policy, policy, resolve_params(specs, params, "panel"), PanelContext(1, 10.0, [], policy))


def nginx_ip_hash(octets: tuple[int, int, int], peers: int, down: set[int] = frozenset()) -> int:
    """ngx_http_upstream_get_ip_hash_peer with every weight 1: hash from 89 over the three
    octets, again from where it stopped while the peer is down."""
    h = 89
    while True:
        for octet in octets:
            h = (h * 113 + octet) % 6271
        if h % peers not in down:
            return h % peers


def test_ip_hash_is_nginx_hash_on_fixed_addresses():
    # 10.0.0: (89*113 + 10) % 6271 = 3796; (3796*113) % 6271 = 2520; (2520*113) % 6271 = 2565; 2565 % 8 = 5
    assert nginx_ip_hash((10, 0, 0), 8) == 5
    ip = get_policy("balance", "ip_hash")([1.0] * 8, None)
    assert ip.octets(None) == (0, 0, 0)
    for client in range(40):
        octets = ip.octets(client)
        assert octets[0] == 10 and all(0 <= o < 256 for o in octets)
        ip.client = client
        assert ip.pick(list(range(8)), [0] * 8, 0.0) == nginx_ip_hash(octets, 8)
        live = [s for s in range(8) if s not in (2, 5)]
        assert ip.pick(live, [0] * 8, 0.0) == nginx_ip_hash(octets, 8, {2, 5})
    ip.client = None
    assert {ip.pick(list(range(8)), [0] * 8, 0.0) for _ in range(5)} == {nginx_ip_hash((0, 0, 0), 8)}


def test_ip_hash_keeps_every_client_on_one_server_until_it_dies():
    panel = _panel("ip_hash")
    where = defaultdict(set)
    for i in range(400):
        before = list(panel.routed)
        panel.on_event({"t": i * 0.01, "kind": "request", "id": i, "size": 0.005, "client": i % 12})
        (s,) = [s for s in range(8) if panel.routed[s] > before[s]]
        where[i % 12].add(s)
    assert all(len(v) == 1 for v in where.values())
    assert len({s for v in where.values() for s in v}) < 8  # twelve clients leave a server idle
    (home,) = where[0]
    panel.on_event({"t": 5.0, "kind": "kill_server", "server": home})
    panel.on_event({"t": 5.1, "kind": "request", "id": 401, "size": 0.005, "client": 0})
    assert panel.routed[home] == len([i for i in range(400) if home in where[i % 12]])
    panel.check_invariants()


def test_the_clients_parameter_adds_ids_only_when_asked():
    p = presets.load("balance-skewed")
    plain = list(stream.generate("jobs", p.workload, 3, 2.0))
    assert plain and all("client" not in e for e in plain if isinstance(e, dict))
    p = presets.load("balance-ip-hash")
    evs = [e for e in stream.generate("jobs", p.workload, 3, 2.0) if isinstance(e, dict)]
    assert {e["client"] for e in evs} == set(range(12))


def test_weighted_least_connections_is_least_connections_when_weights_are_equal():
    lc = get_policy("balance", "least_connections")([1.0] * 4, None)
    wlc = get_policy("balance", "weighted_least_connections")([1.0] * 4, None)
    loads = [[0, 0, 0, 0], [2, 1, 5, 1], [2, 1, 5, 1], [3, 1, 0, 1], [1, 1, 1, 1], [1, 1, 1, 1], [4, 0, 0, 4]]
    for load in loads + loads:
        assert wlc.pick([0, 1, 2, 3], load, 0.0) == lc.pick([0, 1, 2, 3], load, 0.0), load


def test_weighted_least_connections_divides_by_weight_and_rotates_ties_by_weight():
    wlc = get_policy("balance", "weighted_least_connections")([2.0, 1.0, 1.0], None)
    assert wlc.pick([0, 1, 2], [3, 2, 4], 0.0) == 0  # 3/2 < 2/1: conns per weight, not conns
    assert wlc.pick([0, 1, 2], [3, 2, 1], 0.0) == 2
    # 2/2 = 1/1 = 1/1: a three-way tie; smooth weighted round robin gives server 0 two turns in four
    picks = [wlc.pick([0, 1, 2], [2, 1, 1], 0.0) for _ in range(8)]
    assert picks == [0, 1, 2, 0, 0, 1, 2, 0], picks


def test_least_response_time_follows_the_average_and_breaks_ties_by_connections():
    lrt = get_policy("balance", "least_response_time")([1.0] * 3, None, alpha=0.5)
    assert lrt.pick([0, 1, 2], [2, 0, 1], 0.0) == 1  # none measured: the fewest outstanding
    lrt.observe(0, 0.2, 1.0)
    lrt.observe(1, 0.4, 1.0)
    lrt.observe(2, 0.1, 1.0)
    assert lrt.avg == [0.1, 0.2, 0.05]
    assert lrt.pick([0, 1, 2], [0, 0, 9], 1.0) == 2  # the lowest average, however loaded
    lrt.observe(2, 0.35, 2.0)
    assert lrt.avg[2] == 0.2 and lrt.pick([0, 1, 2], [0, 3, 2], 2.0) == 0
    assert lrt.pick([1, 2], [0, 3, 2], 2.0) == 2  # equal averages: fewer outstanding


def test_ip_hash_preset_skew_makes_its_tail_the_worst():
    m = api.run("balance-ip-hash")["panels"]
    assert m["ip_hash"]["imbalance"] > 0.99  # two servers never get a request
    assert m["ip_hash"]["p99_latency"] > 10 * m["random"]["p99_latency"]
    assert m["least_connections"]["p99_latency"] < m["round_robin"]["p99_latency"] < m["random"]["p99_latency"]
    many = Scenario(presets.load("balance-ip-hash").with_overrides({"workload.clients": 200})).run().metrics()
    assert many["ip_hash"]["p99_latency"] < 0.2 * m["ip_hash"]["p99_latency"]


def test_weights_preset_weighted_counts_beat_plain_counts_and_lowest_average_herds():
    m = api.run("balance-weights")["panels"]
    wlc, lc, lrt = m["weighted_least_connections"], m["least_connections"], m["least_response_time"]
    assert wlc["p99_latency"] < 0.85 * lc["p99_latency"], (wlc, lc)
    assert lrt["p99_latency"] > 1.0 and lrt["max_queue"] > 500 and lrt["p99_latency_censored"] == 1
    assert m["ewma"]["p99_latency"] < wlc["p99_latency"]  # measuring beats being told, here
