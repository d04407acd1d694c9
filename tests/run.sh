#!/usr/bin/env bash
# Builds passfs and runs every test: the ctest suite (unit, command-level and
# PyTorch oracle tests) on a normal build, then the unit tests and the fuzz
# targets' seed corpora again on an AddressSanitizer + UndefinedBehaviorSanitizer
# build.  Prints one summary line
# per stage and exits non-zero when anything fails.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
status=0

stage() { # name, then the command
	local name=$1; shift
	echo "== $name"
	if "$@"; then echo "== $name: ok"; else echo "== $name: FAILED"; status=1; fi
}

build() { # dir, cmake options...
	local dir=$1; shift
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null &&
		cmake --build "$dir" -j "$jobs" >/dev/null
}

stage "build" build build
stage "tests" ctest --test-dir build --output-on-failure -j "$jobs"
stage "sanitizer build" build build-asan -DPASSFS_SANITIZE=ON
# LeakSanitizer's stop-the-world tracer has been seen to crash (SIGSEGV in the
# tracer itself, after every check passed) when a worker thread exits at the
# moment it stops the process; a failing sanitizer test is run once more, and
# a real finding fails both times.
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	stage "sanitizer unit tests" ctest --test-dir build-asan --output-on-failure -j "$jobs" -R '^(unit|fuzz)/' \
	--repeat until-pass:2

if [ $status -eq 0 ]; then echo "passfs tests: all stages passed"; else echo "passfs tests: FAILED"; fi
exit $status
