"""Load-balancing policies: each picks one server from the live ones.

``pick(live, load, t)`` gets the live server indices in ascending order and the load the
balancer believes in (outstanding requests per server, possibly stale) and returns one of
``live``. Ties go to the earliest server in ``live``, except where a policy says otherwise. Randomness comes from the panel's own rng
(``int(rng.random() * n)``: cheaper than ``randrange`` and as portable).
"""

from __future__ import annotations

from operator import add, mul
from random import Random

from sims.core.limits import MAX_DURATION
from sims.core.registry import Param, register_policy


class Policy:
    PARAMS: dict[str, Param] = {}
    observes = False  # True: the panel reports each completion to observe()
    own_load = False  # True: load is the balancer's own in-flight count, live even when stale > 0

    def __init__(self, speeds: list[float], rng: Random, **params: object) -> None:
        self.speeds = speeds
        self.rng = rng

    def pick(self, live: list[int], load: list[int], t: float) -> int:
        raise NotImplementedError

    def observe(self, server: int, latency: float, t: float) -> None:
        """A request on ``server`` finished after ``latency`` seconds."""

    def state(self) -> dict:
        return {}

    def explain(self, d, other=None) -> str:
        """One sentence on a route (``d.facts``: the live servers and the load the pick saw)."""
        raise NotImplementedError(f"{type(self).__name__} does not explain its routes")

    def say(self, d, why: str) -> str:
        return f"{self.policy_name} sent {d.subject} to {d.target}: {why}"

    @staticmethod
    def chosen(d) -> int:
        return int(d.target.split()[-1])


@register_policy("balance", "random")
class RandomPick(Policy):
    def pick(self, live: list[int], load: list[int], t: float) -> int:
        return live[int(self.rng.random() * len(live))]

    def explain(self, d, other=None) -> str:
        return self.say(d, f"drawn uniformly from the {len(d.facts['live'])} live servers, whatever their load")


@register_policy("balance", "round_robin")
class RoundRobin(Policy):
    """Live servers in turn, whatever their speed or queue."""

    def __init__(self, speeds: list[float], rng: Random, **params: object) -> None:
        super().__init__(speeds, rng)
        self.i = -1

    def pick(self, live: list[int], load: list[int], t: float) -> int:
        self.i = (self.i + 1) % len(live)
        return live[self.i]

    def explain(self, d, other=None) -> str:
        return self.say(
            d, f"the next live server in turn (turn {self.i + 1} of {len(d.facts['live'])}), whatever its queue"
        )


@register_policy("balance", "weighted_round_robin")
class WeightedRoundRobin(Policy):
    """nginx's smooth weighted round robin with the configured speeds as weights: each pick adds
    every live server's weight to its credit and takes the largest credit, less the total."""

    def __init__(self, speeds: list[float], rng: Random, **params: object) -> None:
        super().__init__(speeds, rng)
        self.weights = list(speeds)  # configured once: a slowed server keeps its weight
        self.credit = [0.0] * len(speeds)

    def pick(self, live: list[int], load: list[int], t: float) -> int:
        credit, weights = self.credit, self.weights
        best, total = live[0], 0.0
        for s in live:
            credit[s] += weights[s]
            total += weights[s]
            if credit[s] > credit[best]:
                best = s
        credit[best] -= total
        return best

    def explain(self, d, other=None) -> str:
        w = self.weights[self.chosen(d)]
        return self.say(
            d, f"it held the largest smooth weighted round-robin credit (its weight, the configured speed, is {w:g})"
        )

    def state(self) -> dict:
        return {"credit": list(self.credit)}


@register_policy("balance", "least_connections")
class LeastConnections(Policy):
    """The server with the fewest outstanding requests, as far as the balancer knows; ties go
    round robin, as nginx's least_conn does (ngx_http_upstream_least_conn_module: among the peers
    with the least conns / weight it runs smooth weighted round robin; here every weight is 1):
    each tied server gains one credit, the most credit wins (the earliest on a tie) and gives
    back as many credits as there were tied servers."""

    def __init__(self, speeds: list[float], rng: Random, **params: object) -> None:
        super().__init__(speeds, rng)
        self.credit = [0] * len(speeds)  # nginx's current_weight, touched only on ties

    def pick(self, live: list[int], load: list[int], t: float) -> int:
        if len(live) == len(load):  # every server is up: let C find the minimum
            least = min(load)
            if load.count(least) == 1:
                return load.index(least)
        else:
            least = min(map(load.__getitem__, live))
        tied = [s for s in live if load[s] == least]
        if len(tied) == 1:
            return tied[0]
        credit = self.credit
        best = tied[0]
        for s in tied:
            credit[s] += 1
            if credit[s] > credit[best]:
                best = s
        credit[best] -= len(tied)
        return best

    def explain(self, d, other=None) -> str:
        load = d.facts["load"]
        s = self.chosen(d)
        tied = sum(1 for x in d.facts["live"] if load[x] == load[s])
        why = f", its turn among the {tied} tied" if tied > 1 else ""
        return self.say(
            d, f"it had the fewest outstanding requests as the balancer saw them ({load[s]}{why}; all: {load})"
        )

    def state(self) -> dict:
        return {"credit": list(self.credit)}


@register_policy("balance", "p2c")
class PowerOfTwo(Policy):
    """Power of two choices: two distinct random live servers, the less loaded wins."""

    def pick(self, live: list[int], load: list[int], t: float) -> int:
        n = len(live)
        if n == 1:
            return live[0]
        random = self.rng.random
        a = int(random() * n)  # random() is portable; int(u * n) is uniform on 0..n-1
        b = int(random() * (n - 1))
        if b >= a:
            b += 1
        a, b = live[a], live[b]
        return b if load[b] < load[a] else a

    def explain(self, d, other=None) -> str:
        load = d.facts["load"]
        return self.say(
            d,
            f"of two servers drawn at random it was the less loaded ({load[self.chosen(d)]} outstanding; all: {load})",
        )


_UNMEASURED = 1e-9  # the estimate of a server never measured: almost free, so it gets tried


@register_policy("balance", "ewma")
class PeakEwma(Policy):
    """Finagle/Linkerd peak EWMA: cost = latency estimate x (outstanding + 1), lowest wins. A
    slower observation replaces the estimate at once (the peak); faster ones decay into it with
    weight tau / (tau + dt); an estimate idle for tau seconds decays toward 0 the same way.
    (tau / (tau + dt) stands in for exp(-dt / tau): basic operations only, so it is portable.)
    Its load is the client's own count of requests in flight (``own_load``): Finagle's PeakEwma and
    tower's (Linkerd's proxy) count outstanding requests through their own handles, so they never
    wait for a load report and a stale ``stale`` setting does not reach them."""

    own_load = True

    PARAMS = {"tau": Param(float, 1.0, "decay time of the latency estimate, seconds", above=0.0, max=MAX_DURATION)}
    observes = True

    def __init__(self, speeds: list[float], rng: Random, tau: float = 1.0, **params: object) -> None:
        super().__init__(speeds, rng)
        if not tau > 0:
            raise ValueError(f"ewma needs tau > 0, got {tau!r}")
        self.tau = tau
        self.est = [_UNMEASURED] * len(speeds)  # latency estimate per server, seconds
        self._ones = [1] * len(speeds)
        self.stamp = [0.0] * len(speeds)  # when est was last updated
        self.next_sweep = 0.0

    def pick(self, live: list[int], load: list[int], t: float) -> int:
        if t >= self.next_sweep:
            self._sweep(t)
        est = self.est
        if len(live) == len(est):  # every server is up: costs in C, first minimum wins
            costs = list(map(mul, est, map(add, load, self._ones)))
            return costs.index(min(costs))
        best, best_cost = live[0], est[live[0]] * (load[live[0]] + 1)
        for s in live:
            cost = est[s] * (load[s] + 1)
            if cost < best_cost:
                best, best_cost = s, cost
        return best

    def explain(self, d, other=None) -> str:
        s, load = self.chosen(d), d.facts["load"]
        cost = self.est[s] * (load[s] + 1)
        return self.say(
            d,
            f"the lowest cost, latency estimate x (outstanding + 1) = {self.est[s]:.4f} s x {load[s] + 1} = {cost:.4f}",
        )

    def _sweep(self, t: float) -> None:
        """Decay estimates not refreshed for tau seconds, so a server that was slow once gets
        tried again; runs every tau / 4 seconds rather than on every pick."""
        tau = self.tau
        for s, stamp in enumerate(self.stamp):
            if t - stamp > tau and self.est[s] > _UNMEASURED:
                self.est[s] *= tau / (tau + t - stamp)
                self.stamp[s] = t
        self.next_sweep = t + tau / 4

    def observe(self, server: int, latency: float, t: float) -> None:
        e = self.est[server]
        if latency > e:
            self.est[server] = latency
        else:
            w = self.tau / (self.tau + t - self.stamp[server])
            self.est[server] = e * w + latency * (1.0 - w)
        self.stamp[server] = t

    def state(self) -> dict:
        return {"latency_estimate": list(self.est)}
