// The site's theme: the system's (prefers-color-scheme) until the reader picks light or dark with
// the header's toggle, which is kept in localStorage. A classic script in <head>, so the choice
// applies before the first paint: it sets <html data-theme>, which site.css and sim.css read,
// passes it to the figures in a shadow root (their `theme` attribute: the element copies it on
// connecting, this script on a change) and sends `cs-theme`, on which every figure redraws.
(function () {
  const KEY = "contention.theme";
  const root = document.documentElement;
  const system = matchMedia("(prefers-color-scheme: dark)");
  function chosen() {
    try {
      const t = localStorage.getItem(KEY);
      return t === "light" || t === "dark" ? t : null;
    } catch (e) {
      return null;
    }
  }
  function isDark() {
    return root.dataset.theme ? root.dataset.theme === "dark" : system.matches;
  }
  function apply(theme) {
    if (theme) root.dataset.theme = theme;
    else delete root.dataset.theme;
    const figures = document.querySelectorAll("contention-sim[data-site-theme]");
    for (let i = 0; i < figures.length; i++) {
      if (theme) figures[i].setAttribute("theme", theme);
      else figures[i].removeAttribute("theme");
    }
    const btn = document.querySelector("[data-theme-toggle]");
    if (btn) {
      btn.setAttribute("aria-pressed", String(isDark()));
      btn.textContent = isDark() ? "☀ Light" : "☾ Dark";
      btn.setAttribute("aria-label", isDark() ? "Switch to the light theme" : "Switch to the dark theme");
    }
    document.dispatchEvent(new CustomEvent("cs-theme", { detail: { dark: isDark() } }));
  }
  apply(chosen());
  system.addEventListener("change", function () {
    if (!chosen()) apply(null);
  });
  document.addEventListener("DOMContentLoaded", function () {
    const btn = document.querySelector("[data-theme-toggle]");
    if (btn)
      btn.addEventListener("click", function () {
        const next = isDark() ? "light" : "dark";
        try {
          localStorage.setItem(KEY, next);
        } catch (e) {}
        apply(next);
      });
    apply(chosen());
  });
})();
