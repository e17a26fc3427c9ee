"""More balancing policies, on the same ``pick(live, load, t)`` as ``policies.py``: nginx's
ip_hash (sticky by client), least response time (NGINX Plus least_time) and nginx's least_conn
with weights.
"""

from __future__ import annotations

from random import Random

from sims.balance.policies import Policy
from sims.core.registry import Param, register_policy
from sims.core.rng import mix64

_NO_ADDRESS = (0, 0, 0)  # nginx's pseudo address for a client that is not IPv4/IPv6


@register_policy("balance", "ip_hash")
class IpHash(Policy):
    """nginx's ip_hash (ngx_http_upstream_ip_hash_module): the first three octets of the client's
    IPv4 address, hash = 89 then hash = (hash * 113 + octet) mod 6271 for each, pick server
    hash mod N (every weight 1, N configured servers). A dead pick rehashes from that hash; after
    20 tries it falls back to round robin. Client i's address is 10.x.y.1 with x, y the top two
    bytes of mix64(i), a fixed random /24 per client; a request with no client hashes nginx's
    pseudo address 0.0.0, so all of them go to one server."""

    by_client = True  # the panel sets self.client before each pick

    def __init__(self, speeds: list[float], rng: Random, **params: object) -> None:
        super().__init__(speeds, rng)
        self.client: int | None = None
        self.rr = -1  # the round robin it falls back to

    @staticmethod
    def octets(client: int | None) -> tuple[int, int, int]:
        if client is None:
            return _NO_ADDRESS
        top = mix64(client) >> 48
        return (10, top >> 8, top & 255)

    def pick(self, live: list[int], load: list[int], t: float) -> int:
        n = len(self.speeds)
        alive = set(live)
        h = 89
        addr = self.octets(self.client)
        for _ in range(21):  # nginx: the first hash and 20 rehashes
            for octet in addr:
                h = (h * 113 + octet) % 6271
            if h % n in alive:
                return h % n
        self.rr = (self.rr + 1) % len(live)
        return live[self.rr]

    def explain(self, d, other=None) -> str:
        client = d.facts.get("client")
        if client is None:
            return self.say(
                d, "the request has no client address, so it hashes nginx's pseudo address like every other"
            )
        a, b, c = self.octets(client)
        n = len(self.speeds)
        if self.chosen(d) == self.hashed(client, n):
            return self.say(d, f"client {client}'s network {a}.{b}.{c} hashes to it: every request of the client does")
        return self.say(
            d, f"client {client}'s own server is down, so nginx rehashed {a}.{b}.{c} until a live one came up"
        )

    def hashed(self, client: int | None, n: int) -> int:
        """The server the client's first hash names, dead or alive."""
        h = 89
        for octet in self.octets(client):
            h = (h * 113 + octet) % 6271
        return h % n


@register_policy("balance", "least_response_time")
class LeastResponseTime(Policy):
    """NGINX Plus least_time (ngx_http_upstream_module docs: "the least average response time and
    least number of active connections"): the live server with the lowest moving average of its
    response times, ties (servers never measured, at 0) to the fewest outstanding requests, then
    the earliest. The average is an EWMA: avg += alpha x (latency - avg) per completion. NGINX
    Plus does not publish how it weighs the two; here the average decides and connections only
    break ties, so it chases the server that was fast a moment ago."""

    PARAMS = {"alpha": Param(float, 0.1, "weight of each new response time in the average", above=0.0, max=1.0)}
    observes = True

    def __init__(self, speeds: list[float], rng: Random, alpha: float = 0.1, **params: object) -> None:
        super().__init__(speeds, rng)
        if not 0 < alpha <= 1:
            raise ValueError(f"least_response_time needs 0 < alpha <= 1, got {alpha!r}")
        self.alpha = alpha
        self.avg = [0.0] * len(speeds)  # EWMA response time per server, seconds

    def pick(self, live: list[int], load: list[int], t: float) -> int:
        avg = self.avg
        best = live[0]
        for s in live:
            if avg[s] < avg[best] or (avg[s] == avg[best] and load[s] < load[best]):
                best = s
        return best

    def observe(self, server: int, latency: float, t: float) -> None:
        self.avg[server] += self.alpha * (latency - self.avg[server])

    def explain(self, d, other=None) -> str:
        s = self.chosen(d)
        return self.say(
            d,
            f"its average response time, {self.avg[s]:.4f} s, was the lowest (ties go to the fewest outstanding: {d.facts['load'][s]})",
        )

    def state(self) -> dict:
        return {"response_time_average": list(self.avg)}


@register_policy("balance", "weighted_least_connections")
class WeightedLeastConnections(Policy):
    """nginx's least_conn with weights (ngx_http_upstream_least_conn_module): the live server with
    the fewest outstanding requests per unit of weight, compared as nginx does, a.conns x b.weight
    < b.conns x a.weight; the weights are the configured speeds. Ties go round robin by nginx's
    smooth weighted rule: each tied server adds its weight to its credit, the most credit wins
    (the earliest on a tie) and gives back the tied servers' total weight."""

    def __init__(self, speeds: list[float], rng: Random, **params: object) -> None:
        super().__init__(speeds, rng)
        self.weights = list(speeds)  # configured once: a slowed server keeps its weight
        self.credit = [0.0] * len(speeds)  # nginx's current_weight, touched only on ties

    def pick(self, live: list[int], load: list[int], t: float) -> int:
        w = self.weights
        best = live[0]
        tied = [best]
        for s in live[1:]:
            a, b = load[s] * w[best], load[best] * w[s]
            if a < b:
                best, tied = s, [s]
            elif a == b:
                tied.append(s)
        if len(tied) == 1:
            return best
        credit, total = self.credit, 0.0
        best = tied[0]
        for s in tied:
            credit[s] += w[s]
            total += w[s]
            if credit[s] > credit[best]:
                best = s
        credit[best] -= total
        return best

    def explain(self, d, other=None) -> str:
        s, load = self.chosen(d), d.facts["load"]
        return self.say(
            d,
            f"it had the fewest outstanding requests per unit of weight, {load[s]} / {self.weights[s]:g} (all: {load})",
        )

    def state(self) -> dict:
        return {"credit": list(self.credit)}
