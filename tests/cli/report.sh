#!/usr/bin/env bash
# The report page (docs/report.md) in a real browser: a mount's report.html,
# after a trajectory of evaluations on two tasks (ok, mismatch, a rerun, the
# same bytes again; a compile error whose message holds HTML), is rendered
# by headless Chromium to a PNG and to its DOM.  The page's numbers - the
# aggregates, every task's state, verdict, score and evaluations, each task's
# ES_t curve, per-variant speedups and trajectory - are checked against
# summary.json, the tasks' result.json and `passfs history export`; the
# PNG against the charts' colors; the message's HTML as text.  Then: the
# page refreshes after a new evaluation, `passfs report` writes the same
# bytes from the state directory, bad entries are shown and not fatal, bad
# usage is refused, and watch mode writes the page too.
NAME=report
. tests/lib/cli.sh
. tests/lib/mount.sh
T=$tmp/tasks
mkdir -p "$T"
cp -r tests/passes/tasks/tiny_bias_gelu "$T/"
mkdir "$T/tiny_bias_gelu2"
sed 's/"id": "tiny_bias_gelu"/"id": "tiny_bias_gelu2"/' tests/passes/tasks/tiny_bias_gelu/graph.json >"$T/tiny_bias_gelu2/graph.json"
for f in tests/passes/tasks/tiny_bias_gelu/*; do
	[ "$(basename "$f")" = graph.json ] || cp -r "$f" "$T/tiny_bias_gelu2/"
done
if ! python3 -c 'import sys; sys.path.insert(0, "tests/lib"); import report_page; sys.exit(report_page.chromium() is None)'; then
	bad "no headless Chromium (chromium-headless-shell): ./tests/deps.sh installs it"
	finish
	exit
fi

out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 "$MNT" 2>"$tmp/mount.err") ||
	{ bad "mount: $(cat "$tmp/mount.err")"; finish; exit; }
daemon=$(echo "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)

# before any evaluation
cp "$MNT/report.html" "$tmp/r0.html" && ok "report.html is in the mount's root" || bad "no report.html in $(ls "$MNT")"
grep -q 'class="task-row" data-task="tiny_bias_gelu2" data-state="idle" data-verdict="null" data-score="null"' "$tmp/r0.html" &&
	ok "before any evaluation: the tasks idle, no score" || bad "before any evaluation: $(grep task-row "$tmp/r0.html")"

# the trajectory: ok, mismatch, a rerun of it, ok again (answered from
# history); a compile error on the second task
cat >"$tmp/html_error.c" <<'EOF'
#include <passfs.h>
#error a message with <b>bold</b> & "quotes"
PASS_REPLACEMENT(pf_call *call) { return pf_not_implemented(); }
EOF
python3 - "$MNT" "$tmp/html_error.c" >"$tmp/py.out" 2>&1 <<'PY'
import json, os, shutil, sys, time
mnt, html_error = sys.argv[1:3]
def result(task, seq):
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            j = json.load(open(os.path.join(mnt, task, "result.json")))
            if j.get("seq") == seq and j.get("state") == "done" and not j.get("stale"):
                return j
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    print("FAIL %s: no result with seq %d" % (task, seq))
    sys.exit(1)
t = os.path.join(mnt, "tiny_bias_gelu")
shutil.copyfile(html_error, os.path.join(mnt, "tiny_bias_gelu2", "pass.c"))
print("ok   compile error:", result("tiny_bias_gelu2", 1)["verdict"])
shutil.copyfile("tests/passes/ok_fused.c", os.path.join(t, "pass.c"))
print("ok   seq 1:", result("tiny_bias_gelu", 1)["verdict"])
shutil.copyfile("tests/passes/mismatch_scaled.c", os.path.join(t, "pass.c"))
print("ok   seq 2:", result("tiny_bias_gelu", 2)["verdict"])
open(os.path.join(t, "rerun"), "w").write("\n")
print("ok   seq 3 (rerun):", result("tiny_bias_gelu", 3)["verdict"])
shutil.copyfile("tests/passes/ok_fused.c", os.path.join(t, "pass.c"))
print("ok   seq 4 (the same bytes as seq 1):", result("tiny_bias_gelu", 4)["verdict"])
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    s = json.load(open(os.path.join(mnt, "summary.json")))
    if all(r["state"] == "done" for r in s["tasks"]):
        break
    time.sleep(0.2)
PY
relay "$tmp/py.out"

cp "$MNT/report.html" "$tmp/r1.html"
cp "$MNT/summary.json" "$tmp/summary.json"
for k in tiny_bias_gelu tiny_bias_gelu2; do cp "$MNT/$k/result.json" "$tmp/$k.result.json"; done
"$PASSFS" history export --state "$STATE" --out "$tmp/hist.jsonl" 2>"$tmp/hist.err" || bad "history export: $(cat "$tmp/hist.err")"
mkdir -p "$tmp/chrome"
python3 - "$tmp" >"$tmp/py.out" 2>&1 <<'PY'
import json, math, os, sys
sys.path.insert(0, "tests/lib")
import report_page as rp
tmp = sys.argv[1]
def ok(m): print("ok   " + m)
def bad(m): print("FAIL " + m)
def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
try:
    png, dom = rp.render(os.path.join(tmp, "r1.html"), os.path.join(tmp, "chrome"))
except Exception as e:
    bad("render: %s" % e)
    sys.exit()
page = rp.numbers(dom)
summ = json.load(open(os.path.join(tmp, "summary.json")))
for k in ("aggregate", "aggregate_all", "evaluated"):
    (ok if same(page[k], summ[k]) else bad)("%s: page %r, summary.json %r" % (k, page[k], summ[k]))
if sorted(page["tasks"]) == sorted(r["id"] for r in summ["tasks"]):
    ok("the page lists summary.json's %d tasks" % len(summ["tasks"]))
else:
    bad("tasks: page %s, summary.json %s" % (sorted(page["tasks"]), [r["id"] for r in summ["tasks"]]))
hist = {}
for line in open(os.path.join(tmp, "hist.jsonl")):
    j = json.loads(line)
    hist.setdefault(j["task"], []).append((j["seq"], j["score"], j["verdict"]))
for r in summ["tasks"]:
    p = page["tasks"].get(r["id"], {})
    good = (p.get("state") == r["state"] and p.get("verdict") == r["verdict"] and same(p.get("score"), r["score"])
            and p.get("seq") == r["seq"] and p.get("evaluations") == len(hist.get(r["id"], [])))
    (ok if good else bad)("%s's row: %r; summary.json %r, %d in the history" % (r["id"], p, r, len(hist.get(r["id"], []))))
for task in ("tiny_bias_gelu", "tiny_bias_gelu2"):
    res = json.load(open(os.path.join(tmp, task + ".result.json")))
    sec = page["sections"].get(task)
    if sec is None:
        bad("%s: no section on the page" % task)
        continue
    want = {k: float(v) for k, v in res["es_t"].items()}
    (ok if len(sec["es_t"]) == 15 and all(same(sec["es_t"].get(k), v) for k, v in want.items()) else bad)(
        "%s: the ES_t curve's 15 points are result.json's es_t" % task)
    vgood = len(sec["variants"]) == len(res["variants"])
    for v in res["variants"]:
        pv = sec["variants"].get(v["name"], {})
        vgood &= pv.get("verdict") == v["verdict"]
        for k in ("speedup", "modeled_speedup", "measured_speedup"):
            vgood &= same(pv.get(k), v.get(k))
    (ok if vgood else bad)("%s: %d variants' verdicts and speedups (scored, modeled, measured) are result.json's" % (
        task, len(res["variants"])))
    traj = [(s, sc) for s, sc, _ in sec["trajectory"]]
    want = [(s, sc) for s, sc, _ in hist.get(task, [])]
    (ok if len(traj) == len(want) and all(a[0] == b[0] and same(a[1], b[1]) for a, b in zip(traj, want)) else bad)(
        "%s: trajectory %s is the history's %s" % (task, traj, want))
verdicts = [v for _, _, v in page["sections"]["tiny_bias_gelu"]["trajectory"]]
(ok if verdicts[:2] == ["ok", "mismatch"] else bad)("trajectory verdicts %s" % verdicts)
# the message's HTML is text, not markup
(ok if '<b>bold</b> & "quotes"' in page["text"] and page["bold"] == 0 else bad)(
    "the compile error's HTML shows as text (%d <b> elements)" % page["bold"])
# the PNG: the charts and badges drawn
w, h, rows = rp.png_pixels(png)
counts = {c: rp.color_count(rows, c) for c in ("#0969da", "#fb8500", "#2da44e", "#1a7f37", "#bf8700", "#8250df")}
names = {"#0969da": "ES_t line and scored bars", "#fb8500": "modeled bars", "#2da44e": "measured bars",
         "#1a7f37": "ok badges", "#bf8700": "the mismatch point", "#8250df": "the compile_error badge"}
for c, n in counts.items():
    (ok if n >= 20 else bad)("PNG %dx%d: %d pixels of %s (%s)" % (w, h, n, c, names[c]))
PY
relay "$tmp/py.out"

# the CLI writes the same page from the state directory
"$PASSFS" report --state "$STATE" --tasks "$T" --out "$tmp/cli.html" 2>"$tmp/cli.err" &&
	cmp -s "$tmp/cli.html" "$tmp/r1.html" && ok "passfs report: the mount's bytes" ||
	bad "passfs report: $(cat "$tmp/cli.err"); $(cmp "$tmp/cli.html" "$tmp/r1.html" 2>&1)"

# refreshed as results change: one more evaluation, one more point
before=$(grep -c 'class="traj"' "$MNT/report.html")
echo >"$MNT/tiny_bias_gelu/rerun"
python3 -c '
import json, sys, time
d = time.monotonic() + 120
while time.monotonic() < d:
    j = json.load(open(sys.argv[1]))
    if j.get("seq") == 5 and j.get("state") == "done" and not j.get("stale"):
        break
    time.sleep(0.2)' "$MNT/tiny_bias_gelu/result.json"
after=$(grep -c 'class="traj"' "$MNT/report.html")
[ "$after" -eq $((before + 1)) ] && ok "after a rerun the page has $after trajectory points (was $before)" ||
	bad "after a rerun: $after trajectory points, was $before"

# bad entries: shown, not fatal
cp -r "$STATE" "$tmp/state2"
echo '{not json' >"$tmp/state2/tiny_bias_gelu/history/000002.json"
echo 'garbage' >"$tmp/state2/tiny_bias_gelu2/result.json"
"$PASSFS" report --state "$tmp/state2" --tasks "$T" --out "$tmp/bad.html" 2>"$tmp/bad.err" &&
	grep -q '1 history entry could not be read' "$tmp/bad.html" &&
	grep -q 'result.json unreadable: .*tiny_bias_gelu2/result.json' "$tmp/bad.html" &&
	[ "$(grep -c 'class="traj"' "$tmp/bad.html")" -eq $((after - 1)) ] &&
	ok "a broken history entry and result.json: named on the page, the rest shown" ||
	bad "broken entries: $(cat "$tmp/bad.err")"

# bad usage
"$PASSFS" report --state "$tmp/nowhere" --out "$tmp/x.html" 2>"$tmp/e1"
rc=$?
[ $rc -eq 1 ] && grep -q "state directory $tmp/nowhere: No such file" "$tmp/e1" && [ ! -e "$tmp/x.html" ] &&
	ok "a missing state directory: exit 1, named, nothing written" || bad "missing state: rc $rc, $(cat "$tmp/e1")"
"$PASSFS" report --bogus 2>"$tmp/e2"
rc=$?
[ $rc -eq 2 ] && ok "an unknown option: exit 2" || bad "unknown option: rc $rc"
"$PASSFS" report --help | grep -q 'report.html' && ok "--help names report.html" || bad "--help"

# watch mode writes it too
W=$tmp/w
watch_beside "$W" --tasks "$T" --state "$tmp/wstate" --backend cpu --trials 1 --warmup 0
cp tests/passes/ok_fused.c "$W/tiny_bias_gelu/pass.c"
python3 - "$W" >"$tmp/py.out" 2>&1 <<'PY'
import json, math, os, sys, time
sys.path.insert(0, "tests/lib")
import report_page as rp
w = sys.argv[1]
d = time.monotonic() + 180
while time.monotonic() < d:
    try:
        s = json.load(open(os.path.join(w, "summary.json")))
        row = [r for r in s["tasks"] if r["id"] == "tiny_bias_gelu"][0]
        page = rp.numbers(open(os.path.join(w, "report.html")).read())
        p = page["tasks"]["tiny_bias_gelu"]
        if row["verdict"] == "ok" and p["verdict"] == "ok":
            break
    except (OSError, ValueError, KeyError, IndexError):
        pass
    time.sleep(0.3)
else:
    print("FAIL watch: no ok in report.html")
    sys.exit()
good = math.isclose(p["score"], row["score"], rel_tol=1e-9) and math.isclose(page["aggregate"], s["aggregate"], rel_tol=1e-9)
print(("ok   " if good else "FAIL ") + "watch: report.html's score %r and aggregate %r are summary.json's" % (p["score"], page["aggregate"]))
PY
relay "$tmp/py.out"
finish
