// podfit HTML report: sort and filter the findings table in the page (no server, no network).
(function () {
  "use strict";
  var table = document.getElementById("findings-table");
  if (!table) return;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var filters = document.getElementById("findings-filters");
  var rule = document.getElementById("filter-rule");
  var severity = document.getElementById("filter-severity");
  var file = document.getElementById("filter-file");
  var shown = document.getElementById("findings-shown");
  filters.hidden = false;

  function apply() {
    var n = 0;
    rows.forEach(function (r) {
      var ok = (!rule.value || r.dataset.rule === rule.value) &&
        (!severity.value || r.dataset.severity === severity.value) &&
        (!file.value || r.dataset.file === file.value);
      r.hidden = !ok;
      if (ok) n += 1;
    });
    shown.textContent = n + " of " + rows.length + " findings shown";
  }
  [rule, severity, file].forEach(function (el) { el.addEventListener("change", apply); });

  function key(row, name) {
    var v = row.dataset[name] || "";
    return name === "rank" || name === "line" ? Number(v) : v;
  }
  function compare(a, b, names) {
    for (var i = 0; i < names.length; i++) {
      var x = key(a, names[i]), y = key(b, names[i]);
      if (x < y) return -1;
      if (x > y) return 1;
    }
    return 0;
  }
  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  headers.forEach(function (th) {
    var button = th.querySelector("button");
    if (!button) return;
    button.addEventListener("click", function () {
      var names = th.dataset.sort.split(" ");
      var descending = th.getAttribute("aria-sort") === "ascending";
      headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      rows.sort(function (a, b) {
        var c = compare(a, b, names) || Number(a.dataset.order) - Number(b.dataset.order);
        return descending ? -c : c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  apply();
})();
