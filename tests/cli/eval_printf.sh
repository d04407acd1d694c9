#!/usr/bin/env bash
# What a pass prints reaches result.json per variant (docs/result-format.md,
# variant log_tail): tests/passes/prints.c prints from its replacement and
# from a kernel on every call; on the cpu backend each f32 variant's
# log_tail has both lines with that variant's element count, in call order,
# not marked truncated, and the declined variants have none.  A flood
# (tests/cheats/c13_log_flood.c, 2 MiB) keeps the last 4 KiB, starting at a
# line, ending with the last line printed, marked log_truncated.
. tests/lib/cli.sh
T=tests/passes/tasks
run() { "$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cpu --trials 2 --warmup 0 --json --pass "$1" 2>"$tmp/err"; }

run tests/passes/prints.c >"$tmp/r.json" || bad "eval prints.c: $(tail -2 "$tmp/err")"
python3 - "$tmp/r.json" <<'PY' >"$tmp/py.out" 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    log = v.get("log_tail")
    if v["dtype"] == "float32":
        n = 16384 if v["name"] == "f32_b1_s64" else None
        lines = log.splitlines() if log else []
        numel = lines[0].split("numel=")[1] if lines and "numel=" in lines[0] else "?"
        good = (v["verdict"] == "ok" and len(lines) >= 2 and len(lines) % 2 == 0 and
                all(lines[k] == "replacement says hello numel=" + numel and
                    lines[k + 1] == "kernel says hello n=" + numel for k in range(0, len(lines), 2)) and
                (n is None or numel == str(n)) and "log_truncated" not in v)
        print(("ok   " if good else "FAIL ") + "%s: the replacement's and the kernel's lines, %d calls, numel %s%s"
              % (v["name"], len(lines) // 2, numel, "" if good else ": %r" % (log or "")[:300]))
    else:
        print(("ok   " if log is None else "FAIL ") + "%s (declined): no log_tail" % v["name"])
PY
while IFS= read -r l; do
	case $l in "ok   "*) ok "${l#ok   }" ;; "FAIL "*) bad "${l#FAIL }" ;; *) bad "python: $l" ;; esac
done <"$tmp/py.out"

run tests/cheats/c13_log_flood.c >"$tmp/f.json" || bad "eval c13_log_flood.c: $(tail -2 "$tmp/err")"
python3 -c "
import json, sys
v = json.load(open(sys.argv[1]))['variants'][0]
log = v.get('log_tail', '')
sys.exit(0 if len(log) <= 4096 and log.startswith('log flood line') and
         log.rstrip('\n').endswith('log flood line  32767: ................................................') and
         v.get('log_truncated') is True else 1)" "$tmp/f.json" &&
	ok "a 2 MiB flood: the last 4 KiB from a line start, ending with the last line, log_truncated" ||
	bad "flood: $(python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['variants'][0]; print(len(v.get('log_tail','')), v.get('log_truncated'), repr(v.get('log_tail','')[:80]))" "$tmp/f.json")"
finish
