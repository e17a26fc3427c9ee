// ESLint for the front end (web/static): browser ES modules, the worker, the embed. `make lint`
// runs it with Prettier's check; style is Prettier's, so only correctness rules live here.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["dist/**", "node_modules/**", "web/static/vendor/**", "**/*.min.js"] },
  js.configs.recommended,
  {
    files: ["web/static/**/*.js", "web/notebook/**/*.js"],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    rules: {
      "no-unused-vars": ["error", { args: "none", caughtErrors: "none" }],
      "no-empty": ["error", { allowEmptyCatch: true }],
      eqeqeq: ["error", "smart"],
      "prefer-const": "error",
      "no-var": "error",
    },
  },
  {
    files: ["tests/browser/js/**/*.mjs", "sitebuild/**/*.mjs", "eslint.config.mjs"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.node } },
  },
  {
    // a classic script for the embedding page, written for old browsers
    files: ["web/static/embed/resize.js"],
    languageOptions: { sourceType: "script" },
    rules: { "no-var": "off" },
  },
  {
    files: ["web/static/js/worker.js"],
    languageOptions: { globals: { ...globals.worker } },
  },
];
