#include "report/page_assets.h"

namespace orchid::report {

const char* const kPageStyle = R"CSS(
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0 24px 48px;
       color: #222; background: #fff; }
h1 { font-size: 22px; margin: 20px 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 4px; }
.model { color: #555; font-family: ui-monospace, Menlo, Consolas, monospace; word-break: break-all; }
.summary { display: flex; flex-wrap: wrap; gap: 12px; margin: 12px 0; }
.figure { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; min-width: 150px; }
.figure .value { font-size: 20px; font-weight: 600; }
.figure .what { color: #666; font-size: 12px; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 8px 0; font-size: 13px; }
.swatch { display: inline-block; width: 12px; height: 12px; border: 1px solid #888; border-radius: 2px;
          vertical-align: -1px; margin-right: 4px; }
#plan { border: 1px solid #ddd; border-radius: 6px; overflow: auto; max-height: 80vh; background: #fff; }
#plan.fit svg { width: 100%; height: auto; }
button { font: inherit; font-size: 12px; margin: 4px 0; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0; }
th, td { border-bottom: 1px solid #e4e4e4; padding: 3px 8px; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; user-select: none; background: #f3f3f3; position: sticky; top: 0; }
table.sortable th[aria-sort="ascending"]::after { content: " \25B2"; font-size: 10px; }
table.sortable th[aria-sort="descending"]::after { content: " \25BC"; font-size: 10px; }
td.name { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; max-width: 420px;
          word-break: break-all; }
dl.record { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; margin: 6px 0; }
dl.record dt { color: #555; }
dl.record dd { margin: 0; }
.region { border: 1px solid #ddd; border-radius: 6px; padding: 4px 14px 10px; margin: 10px 0; }
.badge { display: inline-block; border-radius: 4px; padding: 0 6px; font-size: 12px; margin-left: 6px; }
.badge.applied { background: #b3e2cd; }
.badge.kept { background: #eee; }
ol.steps { margin: 4px 0; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
.note { color: #666; }
)CSS";

const char* const kPageScript = R"JS(
(function () {
  "use strict";
  var body = document.body;
  function record(message) {
    body.dataset.errors = (body.dataset.errors ? body.dataset.errors + "\n" : "") + message;
  }
  window.onerror = function (message, source, line) {
    record(message + " (line " + line + ")");
    return false;
  };
  function cellKey(row, column, numeric) {
    var cell = row.cells[column];
    var key = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent;
    if (!numeric) return key.toLowerCase();
    var value = parseFloat(key);
    return isNaN(value) ? -Infinity : value;
  }
  function sortTable(table, column, descending) {
    var header = table.tHead.rows[0].cells[column];
    var numeric = header.getAttribute("data-type") === "num";
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (a, b) {
      var x = cellKey(a, column, numeric), y = cellKey(b, column, numeric);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -order : order;
    });
    rows.forEach(function (row) { tbody.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  function makeSortable(table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.title = "Sort by this column";
      th.addEventListener("click", function () {
        var sorted = th.getAttribute("aria-sort");
        // Numbers sort largest first on the first click, text A to Z.
        var descending = sorted ? sorted === "ascending" : th.getAttribute("data-type") === "num";
        sortTable(table, column, descending);
      });
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);
  var kernels = document.getElementById("kernels");
  sortTable(kernels, Number(kernels.tHead.getAttribute("data-initial-sort")), true);
  var plan = document.getElementById("plan");
  var fit = document.getElementById("fit");
  fit.addEventListener("click", function () {
    plan.classList.toggle("fit");
    fit.textContent = plan.classList.contains("fit") ? "Actual size" : "Fit to width";
  });
  if (plan.querySelectorAll("svg g.node").length === 0) record("the plan graph has no nodes");
  if (!body.dataset.errors) body.dataset.rendered = "ok";
})();
)JS";

}  // namespace orchid::report
