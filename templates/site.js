// The study site's script, on every page: the theme toggle, the sidebar drawer, full-text
// search (its index, assets/search-index.js, loaded by a script tag when first needed), the
// highlights a search leaves on the page it opens, "I know this" and the progress it shows,
// copy buttons, contents that open the fold they name, the index's filters, a language switch
// that keeps the reader's place, and printing with every fold open. Nothing is fetched and
// nothing leaves the browser: progress and the theme stay in localStorage.
(function () {
  "use strict";
  var doc = document, root = doc.documentElement, body = doc.body;
  var base = root.getAttribute("data-root") || "";
  var each = function (selector, fn, within) {
    Array.prototype.forEach.call((within || doc).querySelectorAll(selector), fn);
  };
  var stored = function (key) {
    try { return localStorage.getItem("ptbank." + key); } catch (e) { return null; }
  };
  var store = function (key, value) {
    try { localStorage.setItem("ptbank." + key, value); } catch (e) { /* private mode */ }
  };
  var escape = function (text) {
    return text.replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c];
    });
  };
  var words = function (query) { return query.toLowerCase().split(/\s+/).filter(Boolean); };

  // theme: the system's until the reader chooses (the choice is applied in <head>)
  doc.getElementById("theme").addEventListener("click", function () {
    var next = root.getAttribute("data-theme") === "dark" ? "light" : "dark";
    root.setAttribute("data-theme", next);
    store("theme", next);
  });
  if (window.matchMedia) {
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", function (e) {
      if (!stored("theme")) { root.setAttribute("data-theme", e.matches ? "dark" : "light"); }
    });
  }

  // the sidebar shows the page's own entry
  var own = doc.querySelector(".nav-questions a[aria-current]");
  if (own) {
    var side = doc.getElementById("sidebar");
    var offset = own.getBoundingClientRect().top - side.getBoundingClientRect().top;
    if (offset > side.clientHeight * 0.6) { side.scrollTop = offset - side.clientHeight / 3; }
  }

  // the sidebar as a drawer (narrow screens)
  var menu = doc.getElementById("menu");
  var drawer = function (open) {
    body.classList.toggle("nav-open", open);
    menu.setAttribute("aria-expanded", String(open));
  };
  menu.addEventListener("click", function (e) {
    e.stopPropagation();
    drawer(!body.classList.contains("nav-open"));
  });
  doc.addEventListener("click", function (e) {
    if (body.classList.contains("nav-open") && !doc.getElementById("sidebar").contains(e.target)) {
      drawer(false);
    }
  });

  // "I know this": ids of known questions, shown wherever a question or topic is listed
  var known = {};
  try { known = JSON.parse(stored("known") || "{}") || {}; } catch (e) { known = {}; }
  var tally = function (el) {
    var ids = el.getAttribute("data-ids").split(" ").filter(Boolean);
    return [ids.filter(function (id) { return known[id]; }).length, ids.length];
  };
  var paint = function () {
    each("[data-id]", function (el) {
      var target = el.tagName === "LI" || el.tagName === "A" ? el : null;
      if (target) { target.classList.toggle("known", !!known[el.getAttribute("data-id")]); }
    });
    each(".tally", function (el) {
      var t = tally(el);
      el.textContent = t[0] ? t[0] + "/" + t[1] : "";
    });
    each(".progress[data-template]", function (el) {
      var t = tally(el);
      el.textContent = el.getAttribute("data-template").replace("{n}", t[0]).replace("{m}", t[1]);
    });
    each(".bar-fill", function (el) {
      var t = tally(el);
      el.style.width = (t[1] ? 100 * t[0] / t[1] : 0) + "%";
    });
    var button = doc.getElementById("known");
    if (button) { button.setAttribute("aria-pressed", String(!!known[button.getAttribute("data-id")])); }
  };
  var toggle = doc.getElementById("known");
  if (toggle) {
    toggle.addEventListener("click", function () {
      var id = toggle.getAttribute("data-id");
      if (known[id]) { delete known[id]; } else { known[id] = 1; }
      store("known", JSON.stringify(known));
      paint();
    });
  }
  var reset = doc.getElementById("reset");
  if (reset) {
    reset.addEventListener("click", function () { known = {}; store("known", "{}"); paint(); });
  }
  window.addEventListener("storage", function (e) {
    if (e.key === "ptbank.known") {
      try { known = JSON.parse(e.newValue || "{}") || {}; } catch (err) { known = {}; }
      paint();
    }
  });
  paint();

  // copy buttons
  var copy = function (text) {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      return navigator.clipboard.writeText(text);
    }
    return new Promise(function (done) {
      var area = doc.createElement("textarea");
      area.value = text;
      body.appendChild(area);
      area.select();
      doc.execCommand("copy");
      body.removeChild(area);
      done();
    });
  };
  each("pre.code", function (pre) {
    var wrap = doc.createElement("div");
    wrap.className = "code-wrap";
    pre.parentNode.insertBefore(wrap, pre);
    wrap.appendChild(pre);
    var button = doc.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = body.getAttribute("data-copy");
    button.addEventListener("click", function () {
      copy(pre.textContent).then(function () {
        button.textContent = body.getAttribute("data-copied");
        button.classList.add("done");
        setTimeout(function () {
          button.textContent = body.getAttribute("data-copy");
          button.classList.remove("done");
        }, 1600);
      });
    });
    wrap.appendChild(button);
  });

  // a link to a part, or to a place inside a fold, opens the fold
  var reveal = function (el) {
    for (var node = el; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
  };
  var revealHash = function () {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && id.indexOf("q=") !== 0 ? doc.getElementById(id) : null;
    if (el) { reveal(el); el.scrollIntoView(); }
  };
  window.addEventListener("hashchange", revealHash);
  each("a[href^='#']", function (a) {
    a.addEventListener("click", function () {
      var el = doc.getElementById(decodeURIComponent(a.getAttribute("href").slice(1)));
      if (el) { reveal(el); }
    });
  });
  revealHash();

  // the contents follow the reader
  var toc = doc.querySelectorAll(".toc a[href^='#']");
  if (toc.length && window.IntersectionObserver) {
    var links = {};
    Array.prototype.forEach.call(toc, function (a) { links[a.getAttribute("href").slice(1)] = a; });
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) {
          Array.prototype.forEach.call(toc, function (a) { a.classList.remove("active"); });
          links[entry.target.id].classList.add("active");
        }
      });
    }, { rootMargin: "-10% 0px -70% 0px" });
    Object.keys(links).forEach(function (id) {
      var el = doc.getElementById(id);
      if (el) { seen.observe(el); }
    });
  }

  // search: every question's title, question, answer, rubric, follow-ups, tags and code names
  var input = doc.getElementById("site-search");
  var panel = doc.getElementById("search-results");
  var index = null, waiting = [];
  var load = function (then) {
    if (index) { then(); return; }
    waiting.push(then);
    if (waiting.length > 1) { return; }
    var ready = function () {
      index = (window.PTBANK_SEARCH || []).map(function (d) {
        d.lt = d.t.toLowerCase(); d.lb = d.b.toLowerCase(); d.lg = d.g.toLowerCase();
        d.lc = d.c.toLowerCase(); d.lp = (d.p + " " + d.l).toLowerCase();
        return d;
      });
      waiting.splice(0).forEach(function (fn) { fn(); });
    };
    if (window.PTBANK_SEARCH) { ready(); return; }
    var script = doc.createElement("script");
    script.src = base + "assets/search-index.js";
    script.onload = ready;
    doc.head.appendChild(script);
  };
  var score = function (d, terms) {
    var total = 0;
    for (var i = 0; i < terms.length; i += 1) {
      var w = terms[i], s = 0, at = d.lb.indexOf(w);
      if (d.lt.indexOf(w) >= 0 || d.n === w) { s += 12; }
      if (d.lg.indexOf(w) >= 0) { s += 6; }
      if (d.lp.indexOf(w) >= 0) { s += 2; }
      if (at >= 0) { s += 3 + (at < 400 ? 1 : 0) + Math.min(d.lb.split(w).length - 2, 4) * 0.5; }
      if (d.lc.indexOf(w) >= 0) { s += 1; }
      if (!s) { return 0; }
      total += s;
    }
    return total;
  };
  // `text` as HTML, each occurrence of a term marked
  var marked = function (text, terms) {
    var lower = text.toLowerCase();
    if (lower.length !== text.length) { text = lower; }
    var spans = [];
    terms.forEach(function (w) {
      for (var at = lower.indexOf(w); at >= 0; at = lower.indexOf(w, at + w.length)) {
        spans.push([at, at + w.length]);
      }
    });
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var out = "", pos = 0;
    spans.forEach(function (span) {
      if (span[0] < pos) { return; }
      out += escape(text.slice(pos, span[0])) + "<mark>" + escape(text.slice(span[0], span[1])) + "</mark>";
      pos = span[1];
    });
    return out + escape(text.slice(pos));
  };
  var snippet = function (d, terms) {
    var at = -1;
    terms.forEach(function (w) {
      var i = d.lb.indexOf(w);
      if (i >= 0 && (at < 0 || i < at)) { at = i; }
    });
    if (at < 0) {
      var names = d.c.split(" ").filter(function (name) {
        return terms.some(function (w) { return name.toLowerCase().indexOf(w) >= 0; });
      });
      if (names.length) { return "<code>" + marked(names.slice(0, 6).join(" "), terms) + "</code>"; }
      at = 0;
    }
    var start = Math.max(0, at - 50), end = Math.min(d.b.length, start + 190);
    return (start ? "\u2026" : "") + marked(d.b.slice(start, end), terms) +
           (end < d.b.length ? "\u2026" : "");
  };
  var results = [], active = -1;
  var show = function (open) { panel.hidden = !open; };
  var choose = function (i) {
    var items = panel.querySelectorAll("a");
    if (!items.length) { return; }
    active = (i + items.length) % items.length;
    Array.prototype.forEach.call(items, function (a, j) { a.classList.toggle("active", j === active); });
    items[active].scrollIntoView({ block: "nearest" });
  };
  var search = function () {
    var terms = words(input.value);
    if (!terms.length) { show(false); return; }
    load(function () {
      if (words(input.value).join(" ") !== terms.join(" ")) { return; }
      results = [];
      index.forEach(function (d, i) {
        var s = score(d, terms);
        if (s) { results.push([s, i, d]); }
      });
      results.sort(function (a, b) { return b[0] - a[0] || a[1] - b[1]; });
      var hash = "#q=" + encodeURIComponent(input.value.trim());
      var count = results.length === 1 ? body.getAttribute("data-result-one")
        : body.getAttribute("data-results").replace("{n}", results.length);
      panel.innerHTML = results.length ? "<p class=\"count\">" + escape(count) + "</p><ul>" +
        results.slice(0, 40).map(function (r) {
          var d = r[2];
          return "<li><a href=\"" + escape(base + d.u + hash) + "\"><span class=\"r-title\">" +
            escape(d.n) + " " + marked(d.t, terms) + "</span><span class=\"r-meta\">" +
            escape(d.p + " \u00b7 " + d.l) + "</span><span class=\"r-snip\">" +
            snippet(d, terms) + "</span></a></li>";
        }).join("") + "</ul>"
        : "<p class=\"none\">" + escape(body.getAttribute("data-none")) + "</p>";
      active = -1;
      show(true);
    });
  };
  var timer = null;
  input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(search, 60); });
  input.addEventListener("focus", function () {
    load(function () {});
    if (input.value.trim() && panel.innerHTML) { show(true); }
  });
  input.addEventListener("keydown", function (e) {
    if (e.key === "ArrowDown") { e.preventDefault(); choose(active + 1); }
    else if (e.key === "ArrowUp") { e.preventDefault(); choose(active - 1); }
    else if (e.key === "Enter") {
      var items = panel.querySelectorAll("a");
      if (items.length) { e.preventDefault(); location.href = items[Math.max(active, 0)].href; }
    } else if (e.key === "Escape") { show(false); input.blur(); }
  });
  doc.addEventListener("click", function (e) {
    if (!e.target.closest || !e.target.closest(".search")) { show(false); }
  });
  doc.addEventListener("keydown", function (e) {
    var t = e.target, typing = t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName);
    if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      input.focus();
      input.select();
    } else if (e.key === "Escape" && body.classList.contains("nav-open")) { drawer(false); }
  });

  // arriving from a search: mark its words in the page and open the fold of the first
  var query = location.hash.indexOf("#q=") === 0 ? decodeURIComponent(location.hash.slice(3)) : "";
  var arrived = words(query);
  var page = doc.querySelector("main article") || doc.querySelector("main");
  if (arrived.length && page) {
    input.value = query;
    var texts = [], walker = doc.createTreeWalker(page, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) { texts.push(walker.currentNode); }
    var first = null, count = 0;
    texts.forEach(function (node) {
      if (count > 300 || /^(SCRIPT|STYLE|BUTTON|MARK)$/.test(node.parentNode.tagName)) { return; }
      var text = node.nodeValue, lower = text.toLowerCase();
      if (lower.length !== text.length) { return; }
      var cuts = [];
      arrived.forEach(function (w) {
        for (var at = lower.indexOf(w); at >= 0; at = lower.indexOf(w, at + w.length)) { cuts.push([at, w.length]); }
      });
      if (!cuts.length) { return; }
      cuts.sort(function (a, b) { return b[0] - a[0]; });      // from the end: offsets stay put
      var end = text.length, earliest = null;
      cuts.forEach(function (cut) {
        if (cut[0] + cut[1] > end) { return; }
        var hit = node.splitText(cut[0]);
        hit.splitText(cut[1]);
        var mark = doc.createElement("mark");
        mark.className = "hit";
        hit.parentNode.replaceChild(mark, hit);
        mark.appendChild(hit);
        earliest = mark;
        end = cut[0];
        count += 1;
      });
      first = first || earliest;
    });
    each("mark.hit", reveal, page);               // every fold with a match opens
    if (first) { first.scrollIntoView({ block: "center" }); }
  }

  // the index's list: level, topic and text filters
  var list = doc.getElementById("questions");
  var filter = doc.getElementById("search");
  if (list && filter) {
    var rows = Array.prototype.slice.call(list.querySelectorAll("li"));
    var level = doc.getElementById("level"), topic = doc.getElementById("topic");
    var shown = doc.getElementById("count");
    var apply = function () {
      var terms = words(filter.value), n = 0;
      rows.forEach(function (row) {
        var ok = (!level.value || row.getAttribute("data-level") === level.value) &&
                 (!topic.value || row.getAttribute("data-topic") === topic.value) &&
                 terms.every(function (w) { return row.getAttribute("data-search").indexOf(w) >= 0; });
        row.hidden = !ok;
        if (ok) { n += 1; }
      });
      shown.textContent = shown.getAttribute("data-template").replace(/\{n\}/g, n)
                                                             .replace(/\{m\}/g, rows.length);
    };
    [filter, level, topic].forEach(function (el) { el.addEventListener("input", apply); });
    apply();
  }

  // the language switch keeps the question (or part) the reader is at
  each("a.lang", function (link) {
    link.addEventListener("click", function () {
      var id = location.hash.slice(1), el = id ? doc.getElementById(decodeURIComponent(id)) : null;
      var keep = el && el.getBoundingClientRect().bottom > 0 &&
                 el.getBoundingClientRect().top < window.innerHeight;
      link.href = link.href.split("#")[0] + (keep ? "#" + id : "");
    });
  });

  // print every fold open, in light colours
  var closed = [], theme = null;
  window.addEventListener("beforeprint", function () {
    closed = Array.prototype.filter.call(doc.querySelectorAll("details"), function (d) { return !d.open; });
    closed.forEach(function (d) { d.open = true; });
    theme = root.getAttribute("data-theme");
    root.setAttribute("data-theme", "light");
  });
  window.addEventListener("afterprint", function () {
    closed.forEach(function (d) { d.open = false; });
    if (theme) { root.setAttribute("data-theme", theme); }
  });
})();
