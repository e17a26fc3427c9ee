"""A simulated network of nodes on the virtual clock, and its faults (shared by replication,
consensus and election; a library, not a topic: it has no ``topic.toml``). ``sims.net.refs``
resolves the node references a fault may use (``"leader"``, marks, offsets) in a panel's run.

API a protocol builds on
------------------------
``Node`` (subclass it; one instance per server):

- ``on_start(now)``: called once when the network starts, and after every restart;
- ``on_message(src, msg, now)``: a message from node ``src`` arrived (``msg`` is any value the
  protocol sent: a dict or a tuple of atomics copies fastest);
- ``on_timer(name, now)``: a timer set with ``set_timer(delay, name)`` fired;
- ``on_request(req, now)``: a client's request, handed in by ``Network.request`` (a paused node
  takes it at its resume, in order with its messages and timers);
- ``on_crash(now)`` / ``on_restart(durable, now)``: after a crash the node hears nothing and its
  timers are void; on restart ``durable=False`` means its disk was lost too (the protocol resets
  the state it calls durable; the default ``on_restart`` just calls ``on_start``);
- inside the hooks: ``self.send(dst, msg, hold=0.0)`` (``hold``: seconds before it leaves, e.g. a
  write to disk first), ``self.broadcast(msg)`` (to every other node),
  ``self.set_timer(delay, name)`` (one live timer per name: setting it again replaces it),
  ``self.cancel_timer(name)``, ``self.traitor`` (its Byzantine mode, "" when honest),
  ``self.local_time(now)`` (its drifting clock), ``self.rng`` (the
  node's own seeded generator), ``self.id`` (0..n-1), ``self.n``, ``self.up``, ``self.paused``.

``Network(nodes, rng, delay=Delay(...), loss=0.0, duplicate=0.0, reorder=0.0, node_rngs=None)``
(``rng`` draws delays, loss, duplication; ``node_rngs``, one ``random.Random`` per node, e.g.
``ctx.rng(f"node{i}")``, else seeded from ``rng`` by an int):

- ``start(now=0.0)``; ``advance(until, after=None)`` delivers messages and fires timers in
  ``(time, seq)`` order up to ``until``, calling ``after(t)`` after each (invariant checks);
- ``request(i, req, now)``: a client's request reaches node i from outside the network (not a
  message: no delay, not counted); a paused node holds it until its resume, a down one drops it;
- ``next_time()``: time of the next delivery or timer, or None;
- ``apply(fault, now)``: a fault from the stream, a dict with ``"fault"``:
  ``{"fault": "partition", "groups": [[0, 1], [2, 3, 4]]}`` (nodes in different groups cannot
  talk; unnamed nodes form one more group), ``{"fault": "heal"}``,
  ``{"fault": "oneway", "from": a, "to": b}`` (messages from a to b are dropped while b's still
  reach a: a hears b, b does not hear a; ``heal`` clears one-way blocks too),
  ``{"fault": "crash", "node": i}``, ``{"fault": "restart", "node": i, "durable": true}``,
  ``{"fault": "pause", "node": i}`` / ``{"fault": "resume", "node": i}`` (a stop-the-world
  pause, a GC or VM pause: the node stays up and keeps its state, but runs no handler; the
  messages that reach it and the timers that come due wait, and at resume they are taken at
  that instant in the order they came due, so a timer overdue at resume fires then, not later;
  its peers hear nothing from it meanwhile; a crash ends a pause and drops what waited),
  ``{"fault": "slow", "node": i, "extra": 0.05}`` (each message to or from it takes that much
  longer; 0 ends it), ``{"fault": "drift", "node": i, "rate": 1.01}`` (its clock runs 1% fast:
  its timers fire after ``delay / rate`` of real time), ``{"fault": "link", "loss": 0.2}``
  (change loss / duplicate / reorder for the whole network; ``"from": a, "to": b``: for a's
  messages to b only; ``"until": t``: until t, when each field it set gets back the value it had
  just before, checked at the first send at or after t),
  ``{"fault": "byzantine", "node": i, "mode": "equivocate"}`` (the node turns traitor: each
  message it sends passes through its ``forge(dst, msg)``, where the protocol says how it lies;
  ``"mode": ""`` makes it honest again);
- ``in_flight(now)``: messages on the wire ``[(src, dst, sent, arrives, msg)]`` for views;
- ``can_reach(a, b)``; counters ``sent delivered dropped duplicated``;
- ``trace``: None, or a ``sims.net.trace.Trace`` that logs every message copy's fate and every
  fault applied (a panel sets it to draw a run; it changes nothing else).

Semantics: a message's delay is drawn from ``delay`` when sent (plus the slow nodes' extra); with
probability ``reorder`` it is held back by another draw (so it overtakes nothing but is overtaken);
with probability ``loss`` it is dropped; with probability ``duplicate`` a second copy with its own
delay is sent. Reachability is checked at delivery: a partition cuts messages already on the wire,
and a crashed receiver drops them (a one-way block likewise; a message that reaches a paused
node is checked then and waits for its resume). The one-way blocks and the pauses cost the hot
path one test each while none exists. Ties at one time break by scheduling order (the clock's
sequence number), so a run is a function of the seed. Everything is ``Checkpointed``: a
``copy.deepcopy`` of the network (nodes included) is an exact checkpoint.
"""

from __future__ import annotations

from sims.net.network import Delay, Network, Node

__all__ = ["Delay", "Network", "Node"]
