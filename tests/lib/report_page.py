"""tests/lib/report_page.py - the report page (docs/report.md) as a browser
shows it: renders an HTML file with headless Chromium to a PNG and to its DOM,
and reads the numbers back out of the DOM's data- attributes.  Used by
tests/cli/report.sh.

    python3 tests/lib/report_page.py PAGE.html OUTDIR   # writes OUTDIR/page.png, page.dom.html,
                                                         # prints the numbers as JSON
"""
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib


def chromium():
    for name in ("chromium-headless-shell", "chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return None


def render(page, outdir, width=1280, height=2400):
    """(png path, dom text) of the page rendered by headless Chromium."""
    exe = chromium()
    if exe is None:
        raise RuntimeError("no headless Chromium (install chromium-headless-shell: ./tests/deps.sh)")
    url = "file://" + os.path.abspath(page)
    common = [exe, "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + os.path.join(outdir, "profile"),
              "--window-size=%d,%d" % (width, height)]
    png = os.path.join(outdir, "page.png")
    r = subprocess.run(common + ["--screenshot=" + png, url], capture_output=True, timeout=120)
    if r.returncode != 0 or not os.path.exists(png):
        raise RuntimeError("chromium --screenshot failed: %s" % r.stderr.decode(errors="replace")[-800:])
    r = subprocess.run(common + ["--dump-dom", url], capture_output=True, timeout=120)
    if r.returncode != 0 or not r.stdout:
        raise RuntimeError("chromium --dump-dom failed: %s" % r.stderr.decode(errors="replace")[-800:])
    dom = r.stdout.decode()
    with open(os.path.join(outdir, "page.dom.html"), "w") as f:
        f.write(dom)
    return png, dom


def png_pixels(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit, non-interlaced PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG" % path)
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or interlace or ctype not in (2, 6):
        raise ValueError("%s: PNG kind %d/%d/%d not read here" % (path, depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def color_count(rows, hexcolor, tol=8):
    """How many pixels are within tol of the color on every channel."""
    want = tuple(int(hexcolor[i:i + 2], 16) for i in (1, 3, 5))
    n = 0
    for row in rows:
        for p in row:
            if abs(p[0] - want[0]) <= tol and abs(p[1] - want[1]) <= tol and abs(p[2] - want[2]) <= tol:
                n += 1
    return n


class _Numbers(html.parser.HTMLParser):
    """The numbers of the page: every element with data- attributes, by kind."""

    def __init__(self):
        super().__init__()
        self.out = {"aggregate": None, "aggregate_all": None, "evaluated": None, "evaluations": None,
                    "tasks": {}, "sections": {}, "bold": 0}
        self.section = None
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "b":
            self.out["bold"] += 1
        if a.get("id") in ("aggregate", "aggregate_all", "evaluated", "evaluations"):
            self.out[a["id"]] = num(a.get("data-value"))
        if tag == "tr" and "task-row" in cls:
            self.out["tasks"][a["data-task"]] = {
                "state": a["data-state"], "verdict": None if a["data-verdict"] == "null" else a["data-verdict"],
                "score": num(a["data-score"]), "seq": int(a["data-seq"]), "evaluations": int(a["data-evaluations"])}
        if tag == "section" and "task" in cls:
            self.section = {"es_t": {}, "variants": {}, "trajectory": [], "bars": 0}
            self.out["sections"][a["data-task"]] = self.section
        if self.section is None:
            return
        if tag == "circle" and "es_t" in cls:
            self.section["es_t"][a["data-t"]] = num(a["data-value"])
        if tag == "circle" and "traj" in cls:
            self.section["trajectory"].append((int(a["data-seq"]), num(a["data-score"]), a["data-verdict"]))
        if tag == "tr" and "variant" in cls:
            self.section["variants"][a["data-variant"]] = {
                "verdict": a["data-verdict"], "speedup": num(a["data-speedup"]),
                "modeled_speedup": num(a["data-modeled"]), "measured_speedup": num(a["data-measured"])}
        if tag == "rect" and "bar" in cls:
            self.section["bars"] += 1

    def handle_data(self, data):
        self.text.append(data)


def num(s):
    return None if s in (None, "null") else float(s)


def numbers(dom):
    p = _Numbers()
    p.feed(dom)
    p.out["text"] = "".join(p.text)
    return p.out


if __name__ == "__main__":
    png, dom = render(sys.argv[1], sys.argv[2])
    out = numbers(dom)
    out.pop("text")
    print(json.dumps(out, indent=1))
