/* Render Plotly figures built on the server.
 * An element <div data-plotly-figure="ID"> is drawn from the JSON in <script id="ID">,
 * on page load and again after htmx swaps new content in. plotly.js comes from static/. */
(function () {
  "use strict";
  function render(root) {
    if (typeof Plotly === "undefined") { return; }
    root.querySelectorAll("[data-plotly-figure]").forEach(function (el) {
      var source = document.getElementById(el.getAttribute("data-plotly-figure"));
      if (!source) { return; }
      var figure = JSON.parse(JSON.parse(source.textContent));
      Plotly.react(el, figure.data, figure.layout, {responsive: true, displaylogo: false});
      el.setAttribute("data-rendered", "true");
    });
  }
  document.addEventListener("DOMContentLoaded", function () { render(document); });
  document.addEventListener("htmx:afterSettle", function (event) { render(event.target); });
})();
