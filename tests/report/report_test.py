#!/usr/bin/env python3
"""Checks of the HTML report in a real browser (Chromium, headless).

Stages (each a ctest entry):

  html EXAMPLE   the report of an e2e example's injected runs (the e2e fixtures
                 built and profiled them): the PPG picture has a node per
                 (vertex, rank) on the drawn paths and an arrow per crossing
                 between ranks, each scaling plot has one point per run, the
                 source pane highlights the ROOT CAUSE line; at 1366x768 the
                 first root cause's file:line is on the first screen and no two
                 labels of the picture overlap (check_layout); a screenshot is
                 kept in the work directory
  hostile        a tiny program compiled from a file whose name is HTML markup,
                 its root-cause line's comment `</script><img ...>`: in the
                 page both stay text (no element, no script of theirs); the
                 layout check on its page, whose longest row label is a long
                 function name
  fallback       with Graphviz missing the page says so and shows a table

The expected values come from `scalana detect --format json` on the same
runs and from the sources, never from constants.
"""
import argparse
import html
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e  # noqa: E402  (examples, markers, MPI environment)

HOSTILE = "</script><img src=x onerror=alert(1)>"
HOSTILE_FILE = "t<img src=x onerror=alert(1)>.c"


class Failure(Exception):
    pass


def run(cmd, env=None, timeout=300):
    print("report: $ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, env=env)
    if p.returncode != 0:
        raise Failure(f"exit code {p.returncode}: {' '.join(cmd)}\n{p.stdout[-3000:]}\n"
                      f"{p.stderr[-3000:]}")
    return p.stdout


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def all_text(self):
        return "".join(self.text) + "".join(c.all_text() for c in self.children)


class Dom(html.parser.HTMLParser):
    """A small element tree of the serialised DOM Chromium dumps."""
    VOID = {"meta", "br", "input", "img", "link", "hr", "circle", "line", "rect", "path",
            "polygon", "ellipse", "polyline"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in self.VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text.append(data)

    def find(self, pred):
        return [n for n in self.root.walk() if pred(n)]


def chromium(page, work, screenshot=None, size=None):
    """The DOM after scripts ran, as Chromium serialises it."""
    exe = os.environ.get("CHROMIUM", "chromium")
    profile = tempfile.mkdtemp(prefix="chromium-", dir=work)
    try:
        base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                f"--user-data-dir={profile}"]
        url = "file://" + os.path.abspath(page.split("#")[0]) + \
            ("#" + page.split("#", 1)[1] if "#" in page else "")
        window = [f"--window-size={size[0]},{size[1]}", "--hide-scrollbars"] if size else []
        dom = run(base + window + ["--dump-dom", url], timeout=120)
        if screenshot:
            run(base + ["--window-size=1366,768", "--hide-scrollbars",
                        f"--screenshot={screenshot}", "file://" + os.path.abspath(page)],
                timeout=120)
            if not os.path.getsize(screenshot):
                raise Failure(f"empty screenshot {screenshot}")
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if "<html" not in dom:
        raise Failure("chromium dumped no DOM")
    return Dom(dom)


def expand_ranges(text):
    """ "0-3,7" -> [0, 1, 2, 3, 7]"""
    out = []
    for piece in text.split(","):
        a, _, b = piece.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


# Measures the laid-out page in the browser and writes what it found into the
# DOM (a <pre id=layout-probe> of JSON), so --dump-dom returns it: where the
# first root cause's file:line is in the viewport and whether it is the element
# shown there, and every pair of the PPG picture's labels (the lines of one
# node, row, column or arrow, as one box) that overlap, or a label that
# overlaps a node box not its own.
PROBE = r"""<script>
(function(){
function box(e){var b=e.getBoundingClientRect();return {left:b.left,top:b.top,right:b.right,bottom:b.bottom,width:b.width,height:b.height};}
function meet(a,b){var t=0.5;return a.left<b.right-t&&b.left<a.right-t&&a.top<b.bottom-t&&b.top<a.bottom-t;}
var out={viewport:{width:innerWidth,height:innerHeight}};
var first=document.querySelector('#rc1 .where');
if(first){var b=box(first);out.first={text:first.textContent,box:b};
var e=document.elementFromPoint(b.left+b.width/2,b.top+b.height/2);out.first.shown=!!e&&(e===first||first.contains(e));}
// A label: the texts of one node, row, column or arrow (its lines), as one box.
var labels=[];[].slice.call(document.querySelectorAll('#ppg svg g.node, #ppg svg g.edge')).forEach(function(g){
 var ts=[].slice.call(g.querySelectorAll('text')).filter(function(t){return t.textContent.trim();});if(!ts.length)return;
 var u=null;ts.forEach(function(t){var b=box(t);u=u?{left:Math.min(u.left,b.left),top:Math.min(u.top,b.top),right:Math.max(u.right,b.right),bottom:Math.max(u.bottom,b.bottom)}:b;});
 labels.push({g:g,text:ts.map(function(t){return t.textContent;}).join(' / '),box:u});});
var shapes=[].slice.call(document.querySelectorAll('#ppg svg g.node')).filter(function(g){return /ppgnode/.test(g.getAttribute('class'));}).map(function(g){return {g:g,box:box(g.querySelector('path,polygon'))};});
var overlaps=[];
for(var i=0;i<labels.length;i++){
 for(var j=i+1;j<labels.length;j++)if(meet(labels[i].box,labels[j].box))overlaps.push([labels[i].text,labels[j].text]);
 for(var k=0;k<shapes.length;k++)if(shapes[k].g!==labels[i].g&&meet(labels[i].box,shapes[k].box))overlaps.push([labels[i].text,'node '+shapes[k].g.id]);}
out.texts=labels.length;out.nodes=shapes.length;out.overlaps=overlaps.slice(0,20);out.overlap_count=overlaps.length;
var pre=document.createElement('pre');pre.id='layout-probe';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
})();
</script>"""


def check_layout(page, work, doc, width=1366, height=768):
    """At a usual screen size the first root cause's file:line is on the first
    screen, and no two texts of the PPG picture overlap (nor a text a node
    it is not in). Measured by the browser on a copy of the page with PROBE
    added (the page itself keeps its one script)."""
    with open(page) as f:
        text = f.read()
    probe = os.path.join(work, "layout-probe.html")
    with open(probe, "w") as f:
        f.write(text.replace("</body>", PROBE + "</body>"))
    dom = chromium(probe, work, size=(width, height))
    pre = dom.find(lambda n: n.attrs.get("id") == "layout-probe")
    if not pre:
        raise Failure("the layout probe wrote nothing")
    got = json.loads(pre[0].all_text())
    # Headless Chromium lays the page out in the window less its frame (625
    # of 768 pixels), about what a browser on a 1366x768 screen shows: that
    # is the fold.
    fold = got["viewport"]["height"]
    if not 0.7 * height <= fold <= height or got["viewport"]["width"] > width:
        raise Failure(f"the page was laid out at {got['viewport']}, not in {width}x{height}")
    top = doc["root_causes"][0]
    want = f"{os.path.basename(top['file'])}:{top['line']}"
    first = got.get("first")
    if not first or first["text"] != want:
        raise Failure(f"the first root cause reads {first and first['text']!r}, want {want!r}")
    b = first["box"]
    if not (b["width"] > 0 and b["top"] >= 0 and b["bottom"] <= fold and b["right"] <= width
            and first["shown"]):
        raise Failure(f"the first root cause {want} is not on the first screen "
                      f"({got['viewport']}): {b}")
    if got["texts"] and not got["nodes"]:
        raise Failure("the probe found the picture's texts but no node")
    if got["overlap_count"]:
        raise Failure(f"{got['overlap_count']} overlapping labels in the PPG picture, e.g. "
                      f"{got['overlaps'][:5]}")
    print(f"report: {want} at y {b['top']:.0f}-{b['bottom']:.0f} of {fold}; "
          f"{got['texts']} picture labels, {got['nodes']} nodes, none overlapping")


def detect(scalana, runs, fmt, out, env=None):
    run([scalana, "detect", "--format", fmt, "-o", out] + runs, env=env)
    if fmt == "json":
        with open(out) as f:
            return json.load(f)
    return None


def step_key(step):
    return (step["file"], step["line"], step["rank"])


def check_page(dom, doc, source, max_causes=5):
    """The page against the JSON report of the same runs and the sources. Which
    root cause ranks first is the e2e detect stage's concern, not this one's."""
    causes = doc["root_causes"]
    if not causes:
        raise Failure("the runs have no root cause; nothing to check")
    # Nodes: one per (vertex, rank) on the drawn paths. Their tooltips name
    # "where, rank R".
    nodes = dom.find(lambda n: n.tag == "g" and "ppgnode" in n.classes())
    titles = []
    for n in nodes:
        a = [c for c in n.walk() if c.tag == "a"]
        titles.append(a[0].attrs.get("xlink:title", "") if a else "")
    want_nodes, want_cross = set(), set()
    for c in causes[:max_causes]:
        prev = None
        for s in c["path"]:
            want_nodes.add(step_key(s))
            if prev and prev[2] != s["rank"]:
                want_cross.add((prev, step_key(s)))
            prev = step_key(s)
    # A node's tooltip ends "at FILE:LINE, rank R: T s", or "ranks 0-3,7: max
    # T s" for ranks that share a column.
    have = set()
    for t in titles:
        m = re.match(r".* at (.+):(\d+), ranks? ([\d,-]+): ", t)
        if m:
            for r in expand_ranges(m.group(3)):
                have.add((m.group(1), int(m.group(2)), r))
    for key in want_nodes:
        if key not in have:
            raise Failure(f"no PPG node for {key[0]}:{key[1]} on rank {key[2]}; nodes: "
                          f"{titles[:20]}")
    columns = dom.find(lambda n: n.tag == "g" and (n.attrs.get("id") or "").startswith("col"))
    ranks = {k[2] for k in want_nodes}
    # Ranks that visit the same vertices share a column, and then a node
    # (its tooltip names them all, checked above): one node per pair only
    # when every rank has a column of its own.
    if len(columns) == len(ranks) and len(nodes) < len(want_nodes):
        raise Failure(f"PPG picture has {len(nodes)} nodes in a column per rank, the paths "
                      f"visit {len(want_nodes)} (vertex, rank) pairs")
    crossings = dom.find(lambda n: n.tag == "g" and "crossing" in n.classes())
    # One column per rank: an arrow per crossing; ranks sharing a column
    # draw their crossings between them as one.
    if len(columns) == len(ranks) and len(crossings) != len(want_cross) or \
            len(crossings) > len(want_cross):
        raise Failure(f"{len(crossings)} crossing arrows in the picture ({len(columns)} columns), "
                      f"the paths cross ranks {len(want_cross)} times")
    labels = [c.all_text().strip() for c in dom.find(
        lambda n: n.tag == "g" and (n.attrs.get("id") or "").startswith("row"))]
    if len(set(labels)) != len(labels):
        raise Failure(f"row labels repeat: {sorted(l for l in labels if labels.count(l) > 1)}")
    for g in crossings:
        if not [c for c in g.walk() if c.tag == "path"]:
            raise Failure("a crossing arrow has no drawn path")
    problematic = [n for n in nodes if "problematic" in n.classes()]
    if any(s["problematic"] for c in causes[:max_causes] for s in c["path"]) and not problematic:
        raise Failure("no node is marked problematic")
    # Plots: one per non-scalable vertex, one point per run.
    plots = dom.find(lambda n: n.tag == "svg" and "plot" in n.classes())
    if len(plots) != len(doc["non_scalable"]):
        raise Failure(f"{len(plots)} scaling plots for {len(doc['non_scalable'])} non-scalable "
                      f"vertices")
    for plot, ns in zip(plots, doc["non_scalable"]):
        pts = [c for c in plot.walk() if c.tag == "circle" and "pt" in c.classes()]
        want = [m for m in ns["merged"] if m["time"] > 0]
        if len(pts) != len(want):
            raise Failure(f"plot of {ns['file']}:{ns['line']} has {len(pts)} points, "
                          f"{len(want)} runs measured it")
        for cls in ("fit", "expected"):
            if not [c for c in plot.walk() if c.tag == "line" and cls in c.classes()]:
                raise Failure(f"plot of {ns['file']}:{ns['line']} has no {cls} line")
    # A plot per root cause (the first ten): one point per run that measured it.
    sizes = {r["world_size"] for r in doc["runs"]}
    cause_plots = dom.find(lambda n: n.tag == "svg" and "causeplot" in n.classes())
    if len(cause_plots) != min(10, len(causes)):
        raise Failure(f"{len(cause_plots)} root-cause plots for {len(causes)} root causes")
    for plot in cause_plots:
        pts = [c for c in plot.walk() if c.tag == "circle" and "pt" in c.classes()]
        # The points' titles, "8 ranks: 0.1234 s" (the parser puts them beside
        # their circles).
        at = [int(m.group(1)) for m in (re.match(r"(\d+) ranks: ", c.all_text())
                                        for c in plot.walk() if c.tag == "title") if m]
        if len(at) != len(pts) or not set(at) <= sizes:
            raise Failure(f"a root-cause plot's points are at {at}, the runs at {sorted(sizes)}")
        if len(pts) > len(sizes):
            raise Failure(f"a root-cause plot has {len(pts)} points for {len(sizes)} runs")
    # Source pane of the top root cause: its line highlighted, text as in the file.
    top = causes[0]
    rc_line = top["line"]
    path = top["file"] if os.path.isabs(top["file"]) else os.path.join(os.path.dirname(source),
                                                                        top["file"])
    with open(path, errors="replace") as f:
        text = f.read().splitlines()[rc_line - 1]
    hits = [n for n in dom.find(lambda n: n.tag == "span" and "hit" in n.classes())
            if re.match(rf"\s*{rc_line}>", n.all_text())]
    if not hits:
        raise Failure(f"no highlighted source line {rc_line}")
    if text.strip() not in hits[0].all_text():
        raise Failure(f"source pane line {rc_line} is {hits[0].all_text()!r}, the file has "
                      f"{text!r}")
    # Every PPG node links to a source pane that exists.
    ids = {n.attrs.get("id") for n in dom.find(lambda n: "id" in n.attrs)}
    for n in nodes:
        for a in (c for c in n.walk() if c.tag == "a"):
            href = a.attrs.get("xlink:href") or a.attrs.get("href") or ""
            if not href.startswith("#") or href[1:] not in ids:
                raise Failure(f"PPG node links to {href!r}, which is not in the page")
    # The PSG tree and its search box.
    if not dom.find(lambda n: n.tag == "input" and n.attrs.get("id") == "psgsearch"):
        raise Failure("no PSG search box")
    if not dom.find(lambda n: n.tag == "span" and "pn" in n.classes()
                    and f":{rc_line}" in n.all_text()):
        raise Failure(f"the PSG tree has no vertex at line {rc_line}")
    print(f"report: {len(nodes)} nodes, {len(crossings)} crossings, {len(plots)} plots; ok")


def no_foreign_markup(dom, page_text):
    imgs = dom.find(lambda n: n.tag == "img")
    if imgs:
        raise Failure(f"program text became markup: {len(imgs)} <img> element(s)")
    handlers = [n for n in dom.find(lambda n: True) if any(k.startswith("on") and k != "oninput"
                                                          for k in n.attrs)]
    if handlers:
        raise Failure(f"event handler attributes in the page: {[n.attrs for n in handlers][:3]}")
    scripts = dom.find(lambda n: n.tag == "script")
    if len(scripts) != 1 or "function psgSearch" not in scripts[0].all_text():
        raise Failure(f"expected exactly the page's own script, found {len(scripts)}")
    if "<img" in page_text.split("<script>")[0].replace("&lt;img", ""):
        raise Failure("an unescaped <img in the page source")


def check_search(page, work, doc):
    """The PSG search, run by the page's script from a #search= link: the
    vertices at the top root cause's line match, their ancestors open, no
    other vertex matches."""
    top = doc["root_causes"][0]
    q = f"{os.path.basename(top['file'])}:{top['line']}"
    dom = chromium(page + "#search=" + q, work)
    spans = dom.find(lambda n: n.tag == "span" and "pn" in n.classes())
    matched = [n for n in spans if "match" in n.classes()]
    want = [n for n in spans if q.lower() in n.attrs.get("data-s", "")]
    if not matched or len(matched) != len(want):
        raise Failure(f"search {q!r}: {len(matched)} vertices highlighted, {len(want)} match")
    for n in matched:
        p = n.parent
        while p is not None and p.attrs.get("id") != "psgtree":
            if p.tag == "details" and "open" not in p.attrs:
                raise Failure(f"search {q!r}: an ancestor of a match stays closed")
            p = p.parent
    count = dom.find(lambda n: n.attrs.get("id") == "psgcount")[0].all_text()
    if not count.startswith(str(len(matched))):
        raise Failure(f"search {q!r}: the count says {count!r}")
    print(f"report: search {q!r}: {len(matched)} match(es)")


def check_time_section(dom, doc):
    """Where the time went: one row per run, each bar's parts summing to the
    whole, and the largest run's medians as the JSON gives them."""
    tables = dom.find(lambda n: n.tag == "table" and "time" in n.classes())
    if len(tables) != 1:
        raise Failure(f"{len(tables)} time tables on the page, expected 1")
    rows = [n for n in tables[0].walk() if n.tag == "tr"][1:]
    if len(rows) != len(doc["runs"]):
        raise Failure(f"time table: {len(rows)} rows for {len(doc['runs'])} runs")
    for row in rows:
        bars = [n for n in row.walk() if n.tag == "div" and "timebar" in n.classes()]
        if not bars:
            raise Failure(f"time table row without a bar: {row.all_text()}")
        for bar in bars:
            widths = [float(re.search(r"width:([\d.]+)%", c.attrs.get("style", "")).group(1))
                      for c in bar.walk() if c.tag == "span"]
            if abs(sum(widths) - 100) > 0.5:
                raise Failure(f"a time bar's parts sum to {sum(widths):.2f}%: {widths}")
    t = max(doc["runs"], key=lambda r: r.get("world_size", 0)).get("time")
    if t:
        want = "computation %.1f%%" % (100 * t["computation"]["median"])
        text = " ".join(n.all_text() for n in dom.find(lambda n: n.tag == "p" and
                                                       "meta" in n.classes()))
        if want not in text:
            raise Failure(f"the page's time line lacks {want!r}")
    # The rate each run obtained, as the JSON gives it.
    text = " ".join(n.all_text() for n in dom.find(lambda n: n.tag == "p" and
                                                   "meta" in n.classes()))
    rates = " / ".join("%.0f" % r["sampling_obtained_hz"] for r in doc["runs"])
    if "Hz asked; obtained " + rates + " Hz" not in text:
        raise Failure(f"the page's sampling line lacks the rates obtained {rates}: {text!r}")


def stage_html(ex, args):
    runs = [ex.run_dir("inject", np) for np in ex.scales]
    for r in runs:
        if not os.path.isdir(r):
            raise Failure(f"{r} is missing: the e2e prof stage must pass first")
    work = os.path.join(args.work_dir, ex.name)
    os.makedirs(work, exist_ok=True)
    doc = detect(ex.scalana, runs, "json", os.path.join(work, "report.json"))
    page = os.path.join(work, "report.html")
    detect(ex.scalana, runs, "html", page)
    shot = os.path.join(work, "report.png")
    dom = chromium(page, work, screenshot=shot)
    check_page(dom, doc, ex.source)
    check_time_section(dom, doc)
    with open(page) as f:
        no_foreign_markup(dom, f.read())
    check_search(page, work, doc)
    check_layout(page, work, doc)
    print(f"report: {page} ({os.path.getsize(page)} bytes), screenshot {shot}")


def stage_hostile(args):
    work = os.path.join(args.work_dir, "hostile")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    src = os.path.join(work, HOSTILE_FILE)
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostile.c"), src)
    with open(src) as f:
        rc_line = [i for i, l in enumerate(f, 1) if e2e.MARKER.search(l)][0]
    binary = os.path.join(work, "hostile")
    run([os.path.join(args.bin_dir, "scalana-cc"), "-O1", "-g", "-o", binary, src])
    e2e.mpi_environment()
    scalana = os.path.join(args.bin_dir, "scalana")
    runs = []
    for np in args.scales:
        out = os.path.join(work, f"np{np}")
        run([args.mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(np), scalana,
             "prof", "-o", out, "--", binary])
        runs.append(out)
    doc = detect(scalana, runs, "json", os.path.join(work, "report.json"))
    page = os.path.join(work, "report.html")
    detect(scalana, runs, "html", page)
    dom = chromium(page, work)
    with open(page) as f:
        no_foreign_markup(dom, f.read())
    # The markup is there, as text: in the source pane and in the file names.
    hits = [n.all_text() for n in dom.find(lambda n: n.tag == "span" and "hit" in n.classes())]
    if not any(HOSTILE in h for h in hits):
        raise Failure(f"the root-cause line's text {HOSTILE!r} is not shown as text: {hits}")
    body = dom.find(lambda n: n.tag == "body")[0].all_text()
    if HOSTILE_FILE + f":{rc_line}" not in body:
        raise Failure(f"the file name {HOSTILE_FILE!r} is not shown as text")
    svg_text = "".join(n.all_text() for n in dom.find(lambda n: n.tag == "svg"))
    if doc["root_causes"] and HOSTILE_FILE not in svg_text:
        raise Failure("the PPG picture does not show the file name as text")
    if doc["root_causes"]:
        check_layout(page, work, doc)
    print("report: hostile names stay text; ok")


def stage_fallback(ex, args):
    runs = [ex.run_dir("inject", np) for np in ex.scales]
    work = os.path.join(args.work_dir, ex.name)
    os.makedirs(work, exist_ok=True)
    page = os.path.join(work, "report-nodot.html")
    env = dict(os.environ, SCALANA_DOT=os.path.join(work, "no-such-dot"))
    detect(ex.scalana, runs, "html", page, env=env)
    with open(page) as f:
        dom = Dom(f.read())
    warn = dom.find(lambda n: n.attrs.get("id") == "ppg-fallback")
    if not warn or "not found" not in warn[0].all_text():
        raise Failure("with Graphviz missing the page does not say so")
    table = dom.find(lambda n: n.attrs.get("id") == "ppg-table")
    rows = [n for n in table[0].walk() if n.tag == "tr"] if table else []
    if len(rows) < 2:
        raise Failure("with Graphviz missing the page has no path table")
    if dom.find(lambda n: n.attrs.get("id") == "ppg"):
        raise Failure("a PPG picture without Graphviz")
    print(f"report: fallback table with {len(rows) - 1} steps; ok")


def main():
    session_tmp = tempfile.mkdtemp(prefix="scalana-test-")
    os.environ["TMPDIR"] = session_tmp
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stage", choices=["html", "hostile", "fallback"])
    p.add_argument("example", nargs="?", choices=sorted(e2e.EXAMPLES))
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("--work-dir", required=True, help="where this test writes")
    p.add_argument("--e2e-work-dir", required=True, help="the e2e tests' work directory")
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--scales", default=",".join(map(str, e2e.DEFAULT_SCALES)),
                   type=lambda s: [int(x) for x in s.split(",")])
    args = p.parse_args()
    args.bin_dir = os.path.abspath(args.bin_dir)
    args.work_dir = os.path.abspath(args.work_dir)
    e2e_args = argparse.Namespace(**vars(args))
    e2e_args.work_dir = os.path.abspath(args.e2e_work_dir)
    try:
        if args.stage == "hostile":
            stage_hostile(args)
        else:
            if not args.example:
                p.error(f"stage {args.stage} needs an example")
            ex = e2e.Example(e2e_args)
            (stage_html if args.stage == "html" else stage_fallback)(ex, args)
    except (Failure, subprocess.TimeoutExpired) as e:
        print(f"report: FAILED: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(session_tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
