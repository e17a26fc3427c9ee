// The requestAnimationFrame driver: virtual time += real elapsed x speed, with the real step
// clamped (a background tab or a long task resumes without a jump) and at most one request in
// flight. It only decides how far to advance; a source answers advance/seek/step with frames.

export const MAX_REAL_STEP = 0.1; // seconds of real time one animation frame may account for
export const MAX_LEAD = 0.25; // real seconds the clock may run ahead of the last frame shown
export const SPEED_MIN = 0.25;
// a long run's default speed may need more than 10x to show its point within 20 s
export const SPEED_MAX = 20;

/** Exponential slider: position in [0, 1] <-> speed in [SPEED_MIN, SPEED_MAX]. */
export const speedFromSlider = (x) => SPEED_MIN * (SPEED_MAX / SPEED_MIN) ** Math.min(1, Math.max(0, x));
export const sliderFromSpeed = (s) => Math.log(Math.min(SPEED_MAX, Math.max(SPEED_MIN, s)) / SPEED_MIN) / Math.log(SPEED_MAX / SPEED_MIN);

/**
 * A queue of requests to one source with at most one in flight. Consecutive advances (and
 * consecutive seeks) coalesce: the newest target wins and every caller gets its frame.
 */
export class Channel {
  constructor(send, onFrame, onError) {
    this.send = send; // (op, args) -> Promise<frame>
    this.onFrame = onFrame;
    this.onError = onError;
    this.queue = [];
    this.busy = false;
  }

  request(op, args = {}) {
    return new Promise((resolve, reject) => {
      const last = this.queue[this.queue.length - 1];
      if (last && last.op === op && (op === "advance" || op === "seek")) {
        last.args = args;
        last.waiters.push({ resolve, reject });
      } else {
        this.queue.push({ op, args, waiters: [{ resolve, reject }] });
      }
      this._pump();
    });
  }

  get idle() {
    return !this.busy && this.queue.length === 0;
  }

  async _pump() {
    if (this.busy || !this.queue.length) return;
    this.busy = true;
    const item = this.queue.shift();
    try {
      const result = await this.send(item.op, item.args);
      this.onFrame(item.op, result);
      for (const w of item.waiters) w.resolve(result);
    } catch (err) {
      for (const w of item.waiters) w.reject(err);
      this.onError(err, item.op);
    } finally {
      this.busy = false;
      this._pump();
    }
  }

  clear(err) {
    const dropped = this.queue;
    this.queue = [];
    for (const item of dropped) for (const w of item.waiters) w.reject(err);
  }
}

/** The clock: call play()/pause(); it requests advance(t) through `advance` each frame. */
export class Clock {
  constructor({ duration, advance, canRequest, onEnd, now = () => performance.now() }) {
    this.duration = duration;
    this.advance = advance; // (t) -> void: request a frame at virtual time t
    this.canRequest = canRequest; // () -> bool: nothing in flight
    this.onEnd = onEnd;
    this.now = now;
    this.speed = 1;
    this.maxLead = MAX_LEAD; // Infinity while frames come from a precomputed list (never slow)
    this.playing = false;
    this.target = 0; // virtual time the clock has reached
    this.shown = 0; // virtual time of the frame on screen
    this.last = null;
    this._raf = 0;
    this._tick = this._tick.bind(this);
    this._onVisibility = () => {
      this.last = null; // resume from "now", whatever happened while hidden
    };
    document.addEventListener("visibilitychange", this._onVisibility);
  }

  play() {
    if (this.playing) return;
    if (this.shown >= this.duration) this.target = this.shown = 0;
    this.playing = true;
    this.last = null;
    this._raf = requestAnimationFrame(this._tick);
  }

  pause() {
    this.playing = false;
    cancelAnimationFrame(this._raf);
  }

  /** Jump the clock (the caller requests the frame). */
  set(t) {
    this.target = this.shown = Math.max(0, Math.min(t, this.duration));
    this.last = null;
  }

  frameShown(t) {
    this.shown = t;
    if (this.target < t) this.target = t;
  }

  _tick(ts) {
    if (!this.playing) return;
    const now = this.now();
    if (document.visibilityState === "hidden") this.last = null;
    const real = this.last === null ? 0 : Math.min(Math.max((now - this.last) / 1000, 0), MAX_REAL_STEP);
    this.last = now;
    const lead = this.shown + this.maxLead * this.speed;
    this.target = Math.min(this.target + real * this.speed, this.duration, Math.max(lead, this.target));
    if (this.target > this.shown && this.canRequest()) this.advance(this.target);
    if (this.shown >= this.duration) {
      this.playing = false;
      this.onEnd?.();
      return;
    }
    this._raf = requestAnimationFrame(this._tick);
  }

  destroy() {
    this.pause();
    document.removeEventListener("visibilitychange", this._onVisibility);
  }
}
