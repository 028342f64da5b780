/* Render Plotly figures built on the server.
 * An element <div data-plotly-figure="ID"> is drawn from the JSON in <script id="ID">,
 * on page load and again after htmx swaps new content in. plotly.js comes from static/. */
(function () {
  "use strict";
  /* A figure narrower than its title in one line draws the title in the lines the server
   * broke it into (planner.charts.layout_rules: layout.meta.narrow), with the room they take. */
  function narrow(el, layout) {
    var n = layout.meta && layout.meta.narrow;
    if (!n || el.clientWidth >= n.below_px) { return layout; }
    var title = typeof layout.title === "string" ? {text: layout.title} : (layout.title || {});
    return Object.assign({}, layout, {
      title: Object.assign({}, title, {text: n.title}),
      margin: Object.assign({}, layout.margin, {t: n.margin_t}),
      height: n.height
    });
  }
  function render(root) {
    if (typeof Plotly === "undefined") { return; }
    root.querySelectorAll("[data-plotly-figure]").forEach(function (el) {
      var source = document.getElementById(el.getAttribute("data-plotly-figure"));
      if (!source) { return; }
      var figure = JSON.parse(JSON.parse(source.textContent));
      Plotly.react(el, figure.data, narrow(el, figure.layout),
                   {responsive: true, displaylogo: false});
      el.setAttribute("data-rendered", "true");
    });
  }
  document.addEventListener("DOMContentLoaded", function () { render(document); });
  document.addEventListener("htmx:afterSettle", function (event) { render(event.target); });
})();
