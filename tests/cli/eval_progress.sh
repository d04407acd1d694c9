#!/usr/bin/env bash
# passfs eval's progress: on a terminal one line, rewritten in place (the
# phase and the variant, K of N) and cleared before the summary; with --json
# on a terminal nothing but the document; not on a terminal (a log, a pipe)
# a plain line per variant and no terminal controls.  The terminal is a real
# pseudo-terminal (script(1)).
source "$(dirname "$0")/../lib/cli.sh"
T=tests/passes/tasks
TASK=tiny_bias_gelu
ARGS=(eval --tasks "$T" --task "$TASK" --pass tests/passes/ok_fused.c --backend cpu --trials 2 --warmup 0)
export PASSFS_CACHE_DIR="$tmp/cache"
q() { printf "%q " "$@"; }
if ! command -v script >/dev/null; then bad "script(1) is missing (bsdutils)"; finish; exit; fi
script -qec "$(q "$PASSFS" "${ARGS[@]}")" /dev/null >"$tmp/tty.out" 2>&1 || bad "on a terminal: exit $?"
script -qec "$(q "$PASSFS" "${ARGS[@]}" --json)" /dev/null >"$tmp/tty_json.out" 2>&1 || bad "--json on a terminal: exit $?"
"$PASSFS" "${ARGS[@]}" >"$tmp/plain.out" 2>"$tmp/plain.err" || bad "not a terminal: exit $?"
if out=$(python3 - "$tmp" <<'PY'
import json, re, sys
d = sys.argv[1]
tty = open(d + "/tty.out", encoding="utf-8", errors="replace", newline="").read()
CL = "\r\x1b[K"
# the line, rewritten: every phase of every variant, K of N
states = [s for s in tty.split(CL) if s.startswith("passfs eval: ")]
assert "passfs eval: compiling the pass" in states, states[:3]
for k, name in enumerate(["f32_b1_s64", "f32_b4_s96", "f16_b1_s64", "f16_b4_s96", "bf16_b1_s64", "bf16_b4_s96"]):
    for what in ("checking the outputs", "timing", "the modeled GPU time (counted calls)"):
        want = "passfs eval: variant %d/6 %s: %s" % (k + 1, name, what)
        assert want in states, ("missing", want)
# cleared before the summary, which follows on a clean line
head, _, tail = tty.partition("task tiny_bias_gelu ")
assert _ and head.endswith(CL), ("the line was not cleared before the summary", head[-80:])
assert "passfs eval: variant" not in tail and "verdict ok" in tail, ("after the summary's start", tail[:200])
assert "passfs eval: variant f32_b1_s64 ..." not in tty, "the per-variant log lines on a terminal"
# --json on a terminal: the document alone
tj = open(d + "/tty_json.out", encoding="utf-8", errors="replace", newline="").read()
assert CL not in tj and "passfs eval:" not in tj, tj[:200]
doc = json.loads(tj.replace("\r\n", "\n"))
assert doc["verdict"] == "ok", doc["verdict"]
# not a terminal: a line per variant, no controls
pe, po = open(d + "/plain.err", newline="").read(), open(d + "/plain.out", newline="").read()
assert "\x1b[" not in pe + po and "\r" not in pe + po, "terminal controls off a terminal"
assert len(re.findall(r"^passfs eval: variant \S+ \.\.\.$", pe, re.M)) == 6, pe
assert "verdict ok" in po, po[:200]
print("%d states on the line, cleared; --json clean; 6 log lines off a terminal" % len(states))
PY
); then ok "$out"; else bad "$out"; fi
finish
