// The study site's only script: filter and search the index, keep the reader on the same
// question across a language switch, and unfold every answer for printing. No requests.
(function () {
  "use strict";
  var list = document.getElementById("questions");
  if (list) {
    var rows = Array.prototype.slice.call(list.querySelectorAll("li"));
    var search = document.getElementById("search");
    var level = document.getElementById("level");
    var topic = document.getElementById("topic");
    var count = document.getElementById("count");
    var apply = function () {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (row) {
        var ok = (!level.value || row.dataset.level === level.value) &&
                 (!topic.value || row.dataset.topic === topic.value) &&
                 words.every(function (w) { return row.dataset.search.indexOf(w) >= 0; });
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      count.textContent = count.dataset.template.replace(/\{n\}/g, shown)
                                                .replace(/\{m\}/g, rows.length);
    };
    [search, level, topic].forEach(function (el) { el.addEventListener("input", apply); });
    apply();
  }
  var current = function () {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (target) {
      var box = target.getBoundingClientRect();
      if (box.bottom > 0 && box.top < window.innerHeight) { return target.id; }
    }
    var articles = document.querySelectorAll("article.q");
    for (var i = 0; i < articles.length; i += 1) {
      if (articles[i].getBoundingClientRect().bottom > 60) { return articles[i].id; }
    }
    return "";
  };
  Array.prototype.forEach.call(document.querySelectorAll("a.lang"), function (link) {
    link.addEventListener("click", function () {
      var id = current();
      link.href = link.href.split("#")[0] + (id ? "#" + id : "");
    });
  });
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) {
      d.open = true;
    });
  });
})();
