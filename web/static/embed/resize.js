// For the host page of an iframe embed (a classic script, optional):
//   <iframe data-contention src="https://HOST/embed/cache-scan/?seed=7"></iframe>
//   <script src="https://HOST/static/embed/resize.js" defer></script>
// Sets each such iframe's height from its {type: "contention:resize", height} messages. A message
// counts only if it comes from this script's own origin (the site) and from one of those iframes.
(function () {
  var script = document.currentScript;
  var origin = new URL(script ? script.src : location.href).origin;
  window.addEventListener("message", function (e) {
    var d = e.data;
    if (e.origin !== origin || !d || d.type !== "contention:resize" || !(d.height > 0)) return;
    var frames = document.querySelectorAll("iframe[data-contention]");
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow === e.source) frames[i].style.height = Math.min(d.height, 5000) + "px";
    }
  });
})();
