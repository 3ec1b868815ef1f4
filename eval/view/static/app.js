// keme view: a static viewer for a keme dataset and its runs. It opens from file:// with no server.
// Every piece of text from the data goes into the page as a text node (el() below): never as HTML.
// Data files are scripts that call KEME.put(name, value); a page loads the files it needs on demand.
"use strict";

var KEME = {
  data: {},
  waiting: {},
  put: function (name, value) { this.data[name] = value; },
};

function load(name) {
  if (name in KEME.data) return Promise.resolve(KEME.data[name]);
  if (!KEME.waiting[name]) {
    KEME.waiting[name] = new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = "data/" + name + ".js";
      script.onload = function () {
        if (name in KEME.data) resolve(KEME.data[name]);
        else reject(new Error("data/" + name + ".js did not define " + name));
      };
      script.onerror = function () { reject(new Error("cannot load data/" + name + ".js")); };
      document.head.appendChild(script);
    });
  }
  return KEME.waiting[name];
}

// el("a", {href: "#/"}, "text", child, [children]): an element; strings become text nodes.
function el(tag, props) {
  var node = document.createElement(tag);
  if (props) {
    for (var key in props) {
      var value = props[key];
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
  return node;
}

function append(node, child) {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
  node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
}

function main() { return document.getElementById("main"); }
function show() {
  var m = main();
  m.textContent = "";
  for (var i = 0; i < arguments.length; i++) append(m, arguments[i]);
}
function enc(text) { return encodeURIComponent(text); }
function day(iso) { return iso ? iso.slice(0, 10) : ""; }
function when(iso) { return iso ? iso.replace("T", " ") : ""; }
function link(href, text, cls) { return el("a", { href: href, class: cls }, text); }
function chip(text, cls) { return el("span", { class: "chip" + (cls ? " " + cls : "") }, text); }
function table(head, rows, cls) {
  return el("table", { class: cls },
    el("thead", null, el("tr", null, head.map(function (h) { return el("th", null, h); }))),
    el("tbody", null, rows));
}
function td(value, cls) { return el("td", { class: cls }, value); }

// ---- where things are: the index, and per persona its year file (session listing, message -> session)
function index() { return load("index"); }
function year(n) { return load("p" + n); }

function pageOf(yearData, messageId) {
  var s = yearData.msg[messageId];
  return s === undefined ? null : yearData.sessions[s].page;
}

// The messages `ids` of persona n, by id (loads the session pages they are on).
function messages(n, ids) {
  return year(n).then(function (y) {
    var pages = {};
    ids.forEach(function (id) { var p = pageOf(y, id); if (p !== null) pages[p] = true; });
    return Promise.all(Object.keys(pages).map(function (p) { return load("p" + n + "-s" + p); }));
  }).then(function (loaded) {
    var out = {};
    loaded.forEach(function (sessions) {
      sessions.forEach(function (s) {
        s.messages.forEach(function (m) { m.session = s.id; out[m.id] = m; });
      });
    });
    return out;
  });
}

function messageView(n, m, marks) {
  marks = marks || {};
  var who = m.role === "system" ? (m.app || "app") : (m.speaker ? m.role + " · " + m.speaker : m.role);
  var cls = "msg " + m.role + (marks[m.id] ? " " + marks[m.id] : "");
  return el("div", { class: cls, id: "m-" + m.id },
    el("div", { class: "meta" }, when(m.at), " · ", who, " · ",
      link("#/p/" + n + "/s/" + enc(m.session || "") + "?m=" + enc(m.id), m.id, "muted")),
    el("div", { class: "text" }, m.text),
    m.captions.length ? el("div", { class: "small muted" }, m.captions.map(function (c) { return "[image: " + c + "] "; })) : null,
    m.images.map(function (src) { return el("img", { src: src, alt: "screenshot of " + m.id, loading: "lazy" }); }),
    m.claims.length ? el("div", { class: "claims" }, m.claims.map(function (c) {
      return chip(c.subject + " · " + c.predicate + " = " + c.value, "claim");
    })) : null);
}

// ---- overview
function overview() {
  return index().then(function (ix) {
    var rows = ix.personas.map(function (p) {
      return el("tr", null, td(link("#/p/" + p.n, p.name)), td(p.id), td(p.language), td(p.country),
        td(day(p.start) + " – " + day(p.end)), td(p.sessions, "num"), td(p.messages, "num"),
        td(link("#/questions?persona=" + p.n, String(p.questions)), "num"));
    });
    var parts = [el("h1", null, ix.name),
      el("p", { class: "muted" }, ix.personas.length + " personas · " + ix.questions.length + " questions · " +
        ix.runs.length + " runs"),
      table(["persona", "id", "language", "country", "span", "sessions", "messages", "questions"], rows)];
    ix.runs.forEach(function (run, r) { parts.push(runView(ix, run, r)); });
    show(parts);
  });
}

function runView(ix, run, r) {
  var board = run.summary;
  var rows = board.rows.map(function (row) {
    return el("tr", null, board.columns.map(function (c) {
      return c === "system" ? td(link("#/questions?run=" + r + "&system=" + enc(row[c]), row[c])) : td(row[c] || "", "num");
    }));
  });
  return el("section", { class: "run" },
    el("h2", null, "run " + run.name + " (reader's k = " + run.k + ")"),
    table(board.columns, rows, "leaderboard"),
    el("p", { class: "small muted" }, board.note),
    failureChart(ix, run, r));
}

function failureChart(ix, run, r) {
  var categories = ix.failure_categories;
  var totals = run.systems.map(function (s) {
    var f = run.summary.failures[s] || {};
    return categories.reduce(function (a, c) { return a + (f[c] || 0); }, 0);
  });
  var most = Math.max.apply(null, totals.concat([1]));
  var rows = run.systems.map(function (s, i) {
    var f = run.summary.failures[s] || {};
    var bar = el("div", { class: "bar", style: null });
    categories.forEach(function (c) {
      if (!f[c]) return;
      var seg = el("a", { class: "f-" + c, title: ix.failure_labels[c] + ": " + f[c],
        href: "#/questions?run=" + r + "&system=" + enc(s) + "&outcome=" + c });
      seg.style.width = (100 * f[c] / most) + "%";
      bar.appendChild(seg);
    });
    return el("tr", null, td(s), td(totals[i], "num"), td(bar, "barcell"),
      categories.map(function (c) { return td(f[c] || 0, "num"); }));
  });
  return el("div", { class: "failures" },
    el("h3", null, "Why questions were got wrong (the first step that failed)"),
    el("div", { class: "legend small" }, categories.map(function (c) {
      return [el("span", { class: "swatch f-" + c }), ix.failure_labels[c]];
    })),
    table(["system", "wrong", "share"].concat(categories.map(function (c) { return ix.failure_labels[c]; })), rows,
      "failure-table"));
}

// ---- persona: attributes over time, life over time, schedule, sessions
function persona(n) {
  return Promise.all([index(), year(n)]).then(function (got) {
    var ix = got[0], y = got[1];
    var attrRows = y.attributes.map(function (a) {
      return el("tr", null, td(a.key), td(a.versions.length ? a.versions.map(function (v, i) {
        return el("div", { class: "version" + (i === a.versions.length - 1 ? " current" : "") },
          el("strong", null, v.value), " ", el("span", { class: "muted" }, "from " + when(v.from)), " ",
          v.evidence.length ? v.evidence.map(function (m) {
            return [link("#/p/" + n + "/s/" + enc(y.sessions[y.msg[m]] ? y.sessions[y.msg[m]].id : "") + "?m=" + enc(m),
              m, "evidence-link"), " "];
          }) : el("span", { class: "muted small" }, "(not revealed)"));
      }) : el("span", { class: "muted" }, "— (no value)")));
    });
    var anchors = {};
    y.anchors.forEach(function (a) { anchors[a.id] = a; });
    var children = {}, roots = [];
    y.events.forEach(function (e) {
      if (e.parent) (children[e.parent] = children[e.parent] || []).push(e); else roots.push(e);
    });
    function byStart(a, b) { return a.start < b.start ? -1 : a.start > b.start ? 1 : 0; }
    function eventView(e) {
      var kids = (children[e.id] || []).slice().sort(byStart);
      var a = e.anchor ? anchors[e.anchor] : null;
      var line = el("span", { class: "event d" + e.depth },
        el("span", { class: "muted" }, when(e.start) + " – " + when(e.end) + " "), e.title, " ",
        chip(e.kind), a ? el("span", { class: "anchor" }, " ⚓ " + (a.app_name || a.app)) : null,
        e.session ? [" ", link("#/p/" + n + "/s/" + enc(e.session), "session " + e.session)] : null);
      if (!kids.length) return el("div", { class: "leaf" }, line);
      return el("details", { class: "node d" + e.depth, open: e.depth > 0 ? null : true },
        el("summary", null, line, el("span", { class: "muted small" }, " (" + kids.length + ")")),
        kids.map(eventView));
    }
    var schedule = y.schedule.map(function (b) {
      return el("tr", null, td(when(b.start)), td(when(b.end)), td(b.place), td(b.city), td(b.activity),
        td(b.companions.join(", ")), td(b.event || ""));
    });
    var sessions = y.sessions.map(function (s) {
      return el("tr", null, td(link("#/p/" + n + "/s/" + enc(s.id), s.id)), td(when(s.start)), td(s.pattern),
        td(s.anchor ? el("span", { class: "anchor" }, "⚓ " + s.anchor) : ""), td(s.messages, "num"),
        td(s.first, "small"));
    });
    var p = ix.personas[n];
    show(el("h1", null, y.name + " ", el("span", { class: "muted" }, y.id)),
      el("p", { class: "muted" }, y.language + " · " + y.country + " · " + day(y.start) + " – " + day(y.end) + " · " +
        p.sessions + " sessions · " + p.messages + " messages · " + y.events.length + " events · " +
        y.anchors.length + " app records · ", link("#/questions?persona=" + n, p.questions + " questions")),
      el("h2", null, "Attributes over time"),
      el("p", { class: "small muted" }, "Each version with when it took effect and the messages that reveal it."),
      table(["attribute", "versions (oldest first)"], attrRows, "attributes"),
      el("h2", null, "Life over time: chapters → episodes → moments"),
      el("div", { class: "timeline" }, roots.sort(byStart).map(eventView)),
      el("details", null, el("summary", null, el("h2", { class: "inline" }, "Schedule (" + y.schedule.length + " blocks)")),
        table(["from", "to", "place", "city", "activity", "with", "event"], schedule, "schedule")),
      el("details", { open: true }, el("summary", null, el("h2", { class: "inline" }, "Sessions (" + y.sessions.length + ")")),
        table(["session", "start", "pattern", "app record", "messages", "first message"], sessions, "sessions")));
  });
}

// ---- one session, a message highlighted
function session(n, sid, params) {
  return year(n).then(function (y) {
    var at = -1;
    y.sessions.forEach(function (s, i) { if (s.id === sid) at = i; });
    if (at < 0) throw new Error("persona " + n + " has no session " + sid);
    return load("p" + n + "-s" + y.sessions[at].page).then(function (page) {
      var s = page.filter(function (x) { return x.id === sid; })[0];
      var marks = {};
      if (params.get("m")) marks[params.get("m")] = "target";
      var prev = at > 0 ? y.sessions[at - 1].id : null, next = at + 1 < y.sessions.length ? y.sessions[at + 1].id : null;
      show(el("p", null, link("#/p/" + n, "← " + y.name)),
        el("h1", null, "Session " + s.id),
        el("p", { class: "muted" }, when(s.start) + " – " + when(s.end) + " · " + s.pattern + " · event " + (s.event || "—") +
          (s.anchor ? " · app record " + s.anchor : "") + " · " + s.language),
        el("p", null, prev ? link("#/p/" + n + "/s/" + enc(prev), "← previous") : null, " ",
          next ? link("#/p/" + n + "/s/" + enc(next), "next →") : null),
        s.messages.map(function (m) { m.session = s.id; return messageView(n, m, marks); }));
      var target = params.get("m") && document.getElementById("m-" + params.get("m"));
      if (target) target.scrollIntoView({ block: "center" });
    });
  });
}

// ---- questions: filters over the index (all questions are there, so filtering loads nothing)
var FIELDS = ["persona", "type", "language", "hops", "format", "difficulty"];
var COLUMN = { persona: 0, type: 2, language: 3, hops: 4, format: 5, difficulty: 6 };

function questions(params) {
  return index().then(function (ix) {
    var selects = {};
    var form = el("div", { class: "filters" });
    FIELDS.forEach(function (f) {
      var values = {};
      ix.questions.forEach(function (q) { values[q[COLUMN[f]]] = true; });
      var options = Object.keys(values).sort();
      var select = el("select", { name: f, onchange: update }, el("option", { value: "" }, f + ": any"),
        options.map(function (v) {
          var label = f === "persona" ? ix.personas[Number(v)].name : v;
          return el("option", { value: v }, label);
        }));
      select.value = params.get(f) || "";
      selects[f] = select;
      form.appendChild(select);
    });
    var text = el("input", { type: "search", name: "text", placeholder: "search question or answer", oninput: update });
    text.value = params.get("text") || "";
    form.appendChild(text);
    var run = el("select", { name: "run", onchange: function () { fillSystems(); update(); } },
      el("option", { value: "" }, "run: none"),
      ix.runs.map(function (r, i) { return el("option", { value: String(i) }, r.name); }));
    var system = el("select", { name: "system", onchange: update });
    var outcome = el("select", { name: "outcome", onchange: update }, el("option", { value: "" }, "outcome: any"),
      el("option", { value: "wrong" }, "wrong"), el("option", { value: "right" }, "right"),
      ix.failure_categories.map(function (c) { return el("option", { value: c }, ix.failure_labels[c]); }));
    if (ix.runs.length) { form.appendChild(run); form.appendChild(system); form.appendChild(outcome); }
    run.value = params.get("run") || (ix.runs.length && params.get("system") ? "0" : "");
    function fillSystems() {
      system.textContent = "";
      system.appendChild(el("option", { value: "" }, "system: none"));
      var r = ix.runs[Number(run.value)];
      if (run.value !== "" && r) r.systems.forEach(function (s) { system.appendChild(el("option", { value: s }, s)); });
    }
    fillSystems();
    system.value = params.get("system") || "";
    outcome.value = params.get("outcome") || "";
    var count = el("p", { class: "count muted" });
    var holder = el("div", { class: "results" });
    show(el("h1", null, "Questions"), form, count, holder);

    function update() {
      var chosen = {};
      FIELDS.forEach(function (f) { if (selects[f].value !== "") chosen[f] = selects[f].value; });
      var needle = text.value.trim().toLowerCase();
      var r = run.value === "" ? null : ix.runs[Number(run.value)];
      var outcomes = r && system.value ? r.outcomes[system.value] || {} : null;
      var want = outcome.value;
      var found = ix.questions.filter(function (q) {
        for (var f in chosen) if (String(q[COLUMN[f]]) !== chosen[f]) return false;
        if (needle && (q[7] + "\u0000" + q[8] + "\u0000" + q[1]).toLowerCase().indexOf(needle) < 0) return false;
        if (outcomes && want) {
          var o = outcomes[q[1]];
          if (!o) return false;
          if (want === "wrong") return o[1] !== null;
          if (want === "right") return o[1] === null && o[0] !== false;
          return o[1] === want;
        }
        return true;
      });
      var state = new URLSearchParams();
      FIELDS.forEach(function (f) { if (chosen[f] !== undefined) state.set(f, chosen[f]); });
      if (text.value) state.set("text", text.value);
      if (run.value !== "") state.set("run", run.value);
      if (system.value) state.set("system", system.value);
      if (want) state.set("outcome", want);
      history.replaceState(null, "", "#/questions" + (String(state) ? "?" + state : ""));
      var shown = found.slice(0, 500);
      count.textContent = found.length + " of " + ix.questions.length + " questions" +
        (found.length > shown.length ? " (the first " + shown.length + " shown)" : "");
      var head = ["id", "persona", "type", "lang", "hops", "format", "difficulty", "question", "gold"];
      if (outcomes) head = head.concat([system.value]);
      holder.textContent = "";
      holder.appendChild(table(head, shown.map(function (q) {
        var o = outcomes ? outcomes[q[1]] : null;
        var verdict = o ? (o[1] ? chip(ix.failure_labels[o[1]], "bad") : o[0] === true ? chip("right", "gold") : chip(o[0] === false ? "wrong" : "—")) : null;
        return el("tr", { "data-id": q[1] }, td(link("#/p/" + q[0] + "/q/" + enc(q[1]) + (system.value ? "?a=" + enc(system.value) : ""), q[1])),
          td(ix.personas[q[0]].name), td(q[2]), td(q[3]), td(q[4], "num"), td(q[5]), td(q[6]), td(q[7]), td(q[8]),
          outcomes ? td(verdict) : null);
      }), "questions"));
    }
    update();
  });
}

// ---- one question: its evidence in context, and what each system did with it
function question(n, qid, params) {
  var item;
  return Promise.all([index(), year(n), load("p" + n + "-q")]).then(function (got) {
    var ix = got[0], y = got[1];
    item = got[2].filter(function (q) { return q.id === qid; })[0];
    if (!item) throw new Error("persona " + n + " has no question " + qid);
    var gold = {};
    item.evidence.forEach(function (m) { gold[m] = "evidence"; });
    Object.keys(item.also).forEach(function (m) { item.also[m].forEach(function (x) { if (!gold[x]) gold[x] = "restates"; }); });
    var wanted = Object.keys(gold);
    var runs = ix.runs.map(function (r, i) { return load("p" + n + "-r" + i); });
    return Promise.all(runs).then(function (records) {
      records.forEach(function (rec) {
        Object.keys(rec).forEach(function (s) {
          var entry = rec[s][qid];
          if (entry) entry.hits.forEach(function (h) { h[0].forEach(function (m) { wanted.push(m); }); });
        });
      });
      return messages(n, wanted).then(function (byId) { render(ix, y, item, gold, records, byId); });
    });
  });

  function render(ix, y, item, gold, records, byId) {
    var contexts = {};
    item.evidence.forEach(function (m) { var msg = byId[m]; if (msg) (contexts[msg.session] = contexts[msg.session] || []).push(m); });
    var evidence = Object.keys(contexts).map(function (sid) {
      var at = y.sessions.filter(function (s) { return s.id === sid; })[0];
      return load("p" + n + "-s" + at.page).then(function (page) {
        var s = page.filter(function (x) { return x.id === sid; })[0];
        var marks = {}, keep = {};
        s.messages.forEach(function (m, i) {
          if (gold[m.id] === "evidence") { marks[m.id] = "evidence"; for (var j = i - 2; j <= i + 2; j++) keep[j] = true; }
          else if (gold[m.id]) marks[m.id] = "restates";
        });
        return el("div", { class: "context" },
          el("div", { class: "small muted" }, "session ", link("#/p/" + n + "/s/" + enc(sid), sid), " · " + when(s.start)),
          s.messages.map(function (m, i) { m.session = sid; return keep[i] ? messageView(n, m, marks) : null; }));
      });
    });
    Promise.all(evidence).then(function (blocks) {
      var head = [link("#/p/" + n, "← " + y.name), " · ", link("#/questions?persona=" + n, "questions")];
      var facts = [["id", item.id], ["type", item.type + (item.subtype ? " / " + item.subtype : "")],
        ["format", item.format], ["language", item.language], ["hops", item.hops], ["difficulty", item.difficulty],
        ["asked at", when(item.asked_at)]];
      show(el("p", null, head),
        el("h1", { class: "question" }, item.question),
        item.options.length ? el("ol", { class: "options", type: "A" }, item.options.map(function (o) { return el("li", null, o); })) : null,
        el("p", { class: "gold" }, el("strong", null, "Gold: "), item.answer),
        el("table", { class: "facts" }, el("tbody", null, facts.map(function (f) { return el("tr", null, el("th", null, f[0]), td(f[1])); }))),
        el("details", null, el("summary", null, "answer spec"), el("pre", null, JSON.stringify(item.spec, null, 2))),
        el("details", null, el("summary", null, "proof"), el("pre", null, JSON.stringify(item.proof, null, 2))),
        el("h2", null, "Evidence in context (" + item.evidence.length + " message" + (item.evidence.length === 1 ? "" : "s") + ")"),
        blocks.length ? blocks : el("p", { class: "muted" }, "No evidence: the data does not answer this question."),
        Object.keys(item.also).length ? el("p", { class: "small muted" }, "Also supported by: " +
          Object.keys(item.also).map(function (m) { return m + " ← " + item.also[m].join(", "); }).join("; ")) : null,
        ix.runs.map(function (run, r) { return systemsView(ix, run, r, records[r], item, gold, byId); }));
    });
  }

  function systemsView(ix, run, r, rec, item, gold, byId) {
    var a = params.get("a") || run.systems[0], b = params.get("b") || run.systems[1] || run.systems[0];
    var summaryRows = run.systems.map(function (s) {
      var e = rec[s] && rec[s][qid];
      if (!e) return el("tr", null, td(s), td("not asked", "muted"));
      var first = firstGold(e, gold);
      return el("tr", null, td(s), td(first ? first : "—", "num"), td(found(e) + " / " + item.evidence.length, "num"), td(e.answer === undefined ? "" : e.answer),
        td(verdicts(e)), td(e.failure ? chip(ix.failure_labels[e.failure], "bad") : ""));
    });
    function picker(name, value) {
      return el("select", { name: name, onchange: function (ev) {
        params.set(name, ev.target.value);
        location.hash = "#/p/" + n + "/q/" + enc(qid) + "?" + params;
      } }, run.systems.map(function (s) { return el("option", { value: s, selected: s === value ? true : null }, s); }));
    }
    return el("section", { class: "run" },
      el("h2", null, "run " + run.name),
      table(["system", "first gold rank", "evidence in the hits", "answer", "verdicts", "failure"], summaryRows, "outcomes"),
      el("div", { class: "filters" }, "side by side: ", picker("a", a), picker("b", b)),
      el("div", { class: "columns" }, [a, b].map(function (s) { return hitsView(ix, run, s, rec[s] && rec[s][qid], gold, byId); })));
  }

  // how many evidence messages the hits hold (each, or a message restating it)
  function found(entry) {
    var got = {};
    entry.hits.forEach(function (h) { h[0].forEach(function (m) { got[m] = true; }); });
    return item.evidence.filter(function (m) {
      return got[m] || (item.also[m] || []).some(function (x) { return got[x]; });
    }).length;
  }

  function firstGold(entry, gold) {
    for (var i = 0; i < entry.hits.length; i++) {
      if (entry.hits[i][0].some(function (m) { return gold[m]; })) return i + 1;
    }
    return null;
  }

  function verdicts(entry) {
    var v = entry.verdicts || {};
    return Object.keys(v).map(function (j) { return chip(j + ": " + (v[j] ? "right" : "wrong"), v[j] ? "gold" : "bad"); });
  }

  function hitsView(ix, run, s, entry, gold, byId) {
    if (!entry) return el("div", null, el("h3", null, s), el("p", { class: "muted" }, "not asked"));
    var inContext = {};
    if (entry.context_m) entry.context_m.forEach(function (m) { inContext[m] = true; });
    var hits = entry.hits.map(function (h, i) {
      var isGold = h[0].some(function (m) { return gold[m]; });
      var within = entry.context_m ? h[0].some(function (m) { return inContext[m]; }) : i < run.k;
      return el("div", { class: "hit" + (isGold ? " gold" : "") + (within ? "" : " outside") },
        el("span", { class: "rank" }, "#" + (i + 1)), " ", el("span", { class: "muted small" }, h[2] === null ? "" : "score " + Number(h[2]).toFixed(3)),
        isGold ? chip("gold", "gold") : null, within ? null : chip("outside the reader's context"),
        h[0].map(function (m) {
          var msg = byId[m];
          return el("div", { class: "hit-text" }, link("#/p/" + n + "/s/" + enc(msg ? msg.session : "") + "?m=" + enc(m), m, "muted small"), " ",
            msg ? msg.text.slice(0, 400) : "");
        }));
    });
    return el("div", { class: "system-column" },
      el("h3", null, s),
      el("p", null, el("strong", null, "Answer: "), entry.answer === undefined ? el("span", { class: "muted" }, "(no reader)") : entry.answer, " ", verdicts(entry),
        entry.failure ? chip(ix.failure_labels[entry.failure], "bad") : null),
      el("p", { class: "small muted" }, "first gold hit at rank " + (firstGold(entry, gold) || "—") + " · the reader's context: " +
        (entry.context_m ? entry.context_m.length + " messages (a context window)" : "the first " + run.k + " hits")),
      hits.length ? hits : el("p", { class: "muted" }, "nothing retrieved"));
  }
}

// ---- routing
function route() {
  var hash = location.hash.slice(1) || "/";
  var cut = hash.indexOf("?");
  var path = (cut < 0 ? hash : hash.slice(0, cut)).split("/").filter(Boolean).map(decodeURIComponent);
  var params = new URLSearchParams(cut < 0 ? "" : hash.slice(cut + 1));
  window.scrollTo(0, 0);
  var done;
  if (path.length === 0) done = overview();
  else if (path[0] === "questions") done = questions(params);
  else if (path[0] === "p" && path.length === 2) done = persona(Number(path[1]));
  else if (path[0] === "p" && path[2] === "s") done = session(Number(path[1]), path[3], params);
  else if (path[0] === "p" && path[2] === "q") done = question(Number(path[1]), path[3], params);
  else done = Promise.reject(new Error("no page " + hash));
  done.then(function () { document.body.setAttribute("data-ready", hash); }, function (error) {
    show(el("p", { class: "error" }, String(error.message || error)));
    document.body.setAttribute("data-ready", hash);
  });
}

window.addEventListener("hashchange", function () {  // the filters' replaceState fires none
  document.body.removeAttribute("data-ready");
  route();
});
document.addEventListener("DOMContentLoaded", function () {
  index().then(function (ix) { document.getElementById("dataset").textContent = ix.name; });
  route();
});
