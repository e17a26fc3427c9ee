"""The rate-limit stream against real nginx: one GET per request, on its own connection, sent at
its time / speed; 200 is admitted (after nginx's delay, without nodelay), 503 rejected.

nginx serves a small static file behind ``limit_req`` (a ``return`` would answer before the
limiter runs). Each measured panel sits beside the simulator's model of the same configuration,
run twice: on the stream's own times, and on the times the requests were actually sent, which
separates our pacing error from a difference of semantics.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from realsys import servers
from sims.ratelimit.nginx import NginxLimitReqDelay, NginxLimitReqNodelay, nginx_rate


@dataclass(frozen=True)
class Setting:
    label: str
    model: type
    nodelay: bool


SETTINGS = (
    Setting("nginx limit_req (measured)", NginxLimitReqDelay, False),
    Setting("nginx limit_req nodelay (measured)", NginxLimitReqNodelay, True),
)


def request_times(events: list[dict]) -> list[float]:
    out = []
    for ev in events:
        if ev["kind"] == "request":
            out.append(ev["t"])
        elif ev["kind"] == "burst":
            out += [ev["t"]] * int(ev.get("count", 1))
    return out


def config(tmp, port: int, rate: float, burst: float, speed: float, nodelay: bool) -> str:
    if burst != int(burst) or burst < 0:
        raise servers.RealError(f"nginx's burst is a whole number of requests, got {burst}")
    conf_rate, _ = nginx_rate(rate, speed)
    (tmp / "www").mkdir(exist_ok=True)
    (tmp / "www" / "index.html").write_text("ok\n")
    for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp / d).mkdir(exist_ok=True)
    return f"""
daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    limit_req_zone $server_port zone=contention:1m rate={conf_rate};
    server {{
        listen 127.0.0.1:{port};
        root {tmp}/www;
        location / {{
            limit_req zone=contention burst={int(burst)}{" nodelay" if nodelay else ""};
        }}
    }}
}}
"""


async def _one(port: int, results: list, i: int) -> None:
    sent = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.1\r\nHost: contention\r\nConnection: close\r\n\r\n")
    await writer.drain()
    status_line = await reader.readline()
    done = time.perf_counter()
    writer.close()
    try:
        code = int(status_line.split()[1])
    except (IndexError, ValueError):
        code = 0
    results[i] = (sent, done, code)


async def _play(port: int, times: list[float], speed: float) -> tuple[float, list]:
    results: list = [None] * len(times)
    tasks = []
    loop_start = time.perf_counter() + 0.05
    for i, t in enumerate(times):
        due = loop_start + t / speed
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(_one(port, results, i)))
    await asyncio.gather(*tasks)
    return loop_start, results


def measure(tmp, exe: str, times: list[float], rate: float, burst: float, speed: float, setting: Setting) -> dict:
    port = servers.free_port()
    conf = tmp / f"nginx-{'nodelay' if setting.nodelay else 'delay'}.conf"
    conf.write_text(config(tmp, port, rate, burst, speed, setting.nodelay))
    with servers.running([exe, "-p", str(tmp), "-c", str(conf)], port, tmp, tmp / "nginx.stderr"):
        start, results = asyncio.run(_play(port, times, speed))
    codes = [c for _, _, c in results]
    bad = [c for c in codes if c not in (200, 503)]
    if bad:
        raise servers.RealError(f"nginx answered {sorted(set(bad))} to some requests; expected 200 or 503")
    sent = [(s - start) * speed for s, _, _ in results]  # virtual seconds, as sent
    waits = [(d - s) for s, d, _ in results]
    admitted = [c == 200 for c in codes]
    late = sorted(abs(s - t) for s, t in zip(sent, times, strict=True))
    return {"admitted": admitted, "sent": sent, "waits": waits, "late": late}


def decisions(
    model: type, times: list[float], rate: float, burst: float, speed: float
) -> tuple[list[bool], list[float]]:
    lim = model(rate=rate, burst=burst, speed=speed)
    out, waits = [], []
    for t in times:
        ok = lim.admit(t)
        out.append(ok)
        waits.append(lim.wait_ms / 1000 if ok else 0.0)
    return out, waits
