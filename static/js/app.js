/* Small behaviours that would otherwise be inline event handlers, which the
 * Content-Security-Policy forbids (no onclick/onchange/onsubmit in templates):
 *   <form data-confirm="Question?">   asks before submitting;
 *   <select data-autosubmit>          submits its form when changed;
 *   <input data-select-on-click>      selects its text when clicked (copyable URLs).
 * Delegated from the document, so content swapped in by htmx works too. */
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { event.preventDefault(); }
  });
  document.addEventListener("change", function (event) {
    var field = event.target;
    if (field.hasAttribute && field.hasAttribute("data-autosubmit") && field.form) {
      field.form.requestSubmit ? field.form.requestSubmit() : field.form.submit();
    }
  });
  document.addEventListener("click", function (event) {
    var field = event.target;
    if (field.hasAttribute && field.hasAttribute("data-select-on-click") && field.select) {
      field.select();
    }
  });
})();
