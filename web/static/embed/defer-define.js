// Imported before sim-element.js by embed.js: tells it not to define <contention-sim> itself, so the
// embed can define its Shadow-DOM subclass under the same name.
globalThis.contentionDefineLater = true;
