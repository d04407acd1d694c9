#!/usr/bin/env bash
# --backend cuda on a machine without a usable GPU: every command that opens a
# device fails with exit status 1 and one line on stderr that says why.  Also
# with the toolkit's stub libcuda (PASSFS_LIBCUDA), whose cuInit always fails.
# On a machine with a GPU this is tests/gpu/check.sh's business: skipped.
set -uo pipefail
PASSFS=${PASSFS:-./build/passfs}
T=tests/passes/tasks
fails=0
pass=0
err=$(mktemp)
trap 'rm -f "$err"; rm -rf "${out:-}"' EXIT

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	echo "skip: a GPU is present (tests/gpu/check.sh covers the cuda backend)"
	exit 0
fi

one_line_failure() { # name, expected text, command...
	local name=$1 want=$2
	shift 2
	"$@" >/dev/null 2>"$err"
	local rc=$? lines
	lines=$(wc -l <"$err")
	if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -qF -- "$want" "$err"; then
		echo "ok   $name: $(cat "$err")"
		pass=$((pass + 1))
	else
		echo "FAIL $name: exit $rc, $lines line(s): $(cat "$err")"
		fails=$((fails + 1))
	fi
}

out=$(mktemp -d)
one_line_failure "eval --backend cuda" "passfs eval: --backend cuda: no CUDA driver (libcuda.so.1) or no GPU" \
	"$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cuda --pass tests/passes/ok_fused.c
one_line_failure "eager --backend cuda" "passfs eager: --backend cuda: no CUDA driver" \
	"$PASSFS" eager --tasks "$T" --task tiny_bias_gelu --backend cuda --out "$out"
for stub in /usr/local/cuda/lib64/stubs/libcuda.so /usr/local/cuda/lib/stubs/libcuda.so; do
	[ -r "$stub" ] || continue
	PASSFS_LIBCUDA=$stub one_line_failure "eval --backend cuda, stub driver" "CUDA_ERROR_STUB_LIBRARY" \
		"$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cuda --pass tests/passes/ok_fused.c
	break
done
echo "$pass passed, $fails failed"
[ $fails -eq 0 ]
