"""``contention replay PRESET --against redis|nginx``: the preset's stream on the real system, its
measured panels beside the simulator's, in ``run --json``'s shape."""

from __future__ import annotations

import math

from realsys import nginx_replay, redis_replay, servers
from sims.core import presets
from sims.core.scenario import Scenario

AGAINST = {"redis": "cache", "nginx": "ratelimit"}


def _with_panels(preset: presets.Preset, extra: list[dict]) -> presets.Preset:
    raw = dict(preset.raw)
    raw["panels"] = [dict(p) for p in preset.raw.get("panels", [])] + extra
    return presets.parse_preset(raw, preset.path or f"{preset.name}.toml")


def _check(preset: presets.Preset, against: str, speed: float) -> None:
    if against not in AGAINST:
        raise servers.RealError(f"--against {against!r}: expected one of {', '.join(AGAINST)}")
    if preset.topic != AGAINST[against]:
        raise servers.RealError(
            f"{preset.name} is a {preset.topic} preset; --against {against} replays {AGAINST[against]} presets"
        )
    if not (speed == speed and 0 < speed <= 100 and math.isfinite(speed)):
        raise servers.RealError(f"--speed must lie in (0, 100], got {speed}")


def run(
    preset: presets.Preset,
    against: str,
    speed: float = 1.0,
    address: str | None = None,
    seed: int | None = None,
    duration: float | None = None,
) -> dict:
    _check(preset, against, speed)
    if against == "redis":
        return _redis(preset, speed, address, seed, duration)
    return _nginx(preset, speed, address, seed, duration)


def _redis(preset, speed, address, seed, duration) -> dict:
    size = preset.panels[0].params["size"]
    events = Scenario(preset, seed, duration).run_events()
    if address:
        measured = redis_replay.measure(servers.parse_address(address), events, size, speed)
    else:
        with servers.workdir("contention-redis-") as tmp:
            port = servers.free_port()
            with redis_replay.start(tmp, port):
                measured = redis_replay.measure(("127.0.0.1", port), events, size, speed)
    # each model runs with Redis's clock as it stood when its replay began
    extra = [
        {
            "name": _sim(s.label),
            "policy": s.model,
            "size": size,
            "speed": speed,
            "clock_offset": measured["panels"][s.label]["clock_offset"],
            **s.params,
        }
        for s in redis_replay.SETTINGS
    ]
    result = Scenario(_with_panels(preset, extra), seed, duration).run().result()
    result["panels"].update(measured["panels"])
    for s in redis_replay.SETTINGS:
        got = measured["panels"][s.label]
        got["sim_minus_measured"] = result["panels"][_sim(s.label)]["hit_ratio"] - got["hit_ratio"]
        got["sim_on_sent_minus_measured"] = got["sim_on_sent_times"] - got["hit_ratio"]
    result |= {"against": "redis", "speed": speed, "server": {"version": measured["version"], **measured["sizing"]}}
    return result


def _sim(label: str) -> str:
    return label.replace("(measured)", "(sim)")


def _limit(preset) -> tuple[float, float]:
    for p in preset.panels:
        if p.policy in ("nginx_limit_req", "nginx_limit_req_nodelay", "leaky_bucket", "token_bucket"):
            return float(p.params["rate"]), float(p.params["burst"])
    raise servers.RealError(
        f"{preset.name}: no bucket panel (token_bucket, leaky_bucket, nginx_*) gives a rate and burst"
    )


def _nginx(preset, speed, address, seed, duration) -> dict:
    if address:
        raise servers.RealError(
            "--address is for Redis; nginx's limit_req is configured per replay, so it is started here"
        )
    rate, burst = _limit(preset)
    extra = [
        {"name": "nginx limit_req (sim)", "policy": "nginx_limit_req", "rate": rate, "burst": burst, "speed": speed},
        {
            "name": "nginx limit_req nodelay (sim)",
            "policy": "nginx_limit_req_nodelay",
            "rate": rate,
            "burst": burst,
            "speed": speed,
        },
    ]
    sc = Scenario(_with_panels(preset, extra), seed, duration).run()
    result = sc.result()
    times = nginx_replay.request_times(sc.run_events())
    exe = servers.which("nginx", "nginx")
    agreement = {}
    with servers.workdir("contention-nginx-") as tmp:
        for s in nginx_replay.SETTINGS:
            got = nginx_replay.measure(tmp, exe, times, rate, burst, speed, s)
            want, want_waits = nginx_replay.decisions(s.model, times, rate, burst, speed)
            on_sent, _ = nginx_replay.decisions(s.model, got["sent"], rate, burst, speed)
            n = len(times)
            same = sum(a == b for a, b in zip(got["admitted"], want, strict=True))
            same_sent = sum(a == b for a, b in zip(got["admitted"], on_sent, strict=True))
            accepted = sum(got["admitted"])
            late = got["late"]
            waits = sorted(w for w, ok in zip(got["waits"], got["admitted"], strict=True) if ok)
            result["panels"][s.label] = {
                "requests": n,
                "accepted": accepted,
                "rejected": n - accepted,
                "reject_rate": (n - accepted) / n if n else 0.0,
                "agreement": same / n if n else 1.0,
                "agreement_on_sent_times": same_sent / n if n else 1.0,
                "late_p50_ms": 1000 * late[n // 2] / speed if n else 0.0,
                "late_max_ms": 1000 * late[-1] / speed if n else 0.0,
                "wait_p50_ms": 1000 * waits[len(waits) // 2] if waits else 0.0,
                "wait_max_ms": 1000 * waits[-1] if waits else 0.0,
            }
            agreement[s.label] = [
                {
                    "index": i,
                    "t": times[i],
                    "sent": got["sent"][i],
                    "sim": want[i],
                    "nginx": got["admitted"][i],
                    "sim_on_sent": on_sent[i],
                    "sim_wait_ms": 1000 * want_waits[i],
                }
                for i in range(n)
                if want[i] != got["admitted"][i]
            ]
    result |= {"against": "nginx", "speed": speed, "server": {"rate": rate, "burst": burst}, "disagreements": agreement}
    return result
