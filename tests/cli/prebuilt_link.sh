#!/usr/bin/env bash
# The prebuilt for a GPU machine without passfs's packages (tests/gpu/prepare.sh,
# -DPASSFS_STATIC_DEPS=ON) must need no shared library beyond libc, libm, libdl,
# libpthread, librt and the loader, or `passfs --help` fails there and the
# device check is lost.  Configures that build (no compile) and reads passfs's
# link line; with a build-prebuilt/ in the tree, also its ldd.
. tests/lib/cli.sh
if ! command -v cmake >/dev/null 2>&1; then
	echo "skip: no cmake"
	exit 0
fi
if ! cmake -S . -B "$tmp/b" -DCMAKE_BUILD_TYPE=Release -DPASSFS_STATIC_DEPS=ON -DPASSFS_WERROR=OFF \
	>"$tmp/cfg.log" 2>&1; then
	bad "configure -DPASSFS_STATIC_DEPS=ON: $(tail -3 "$tmp/cfg.log")"
	finish
	exit
fi
link=$tmp/b/CMakeFiles/passfs.dir/link.txt
if [ ! -f "$link" ]; then
	bad "no link line for passfs at $link"
	finish
	exit
fi
words=$(tr ' ' '\n' <"$link")
shared=$(printf '%s\n' "$words" | grep -E '\.so(\.[0-9]+)*$|^-l' |
	grep -Ev '^-l(c|m|dl|pthread|rt)$' | sort -u | tr '\n' ' ')
if [ -z "$shared" ]; then
	ok "the static link line names no shared library beyond libc/libm/libdl/libpthread/librt"
else
	bad "the static link line needs shared libraries: $shared"
fi
for lib in jansson fuse3; do
	if printf '%s\n' "$words" | grep -q "lib$lib\.a$"; then ok "lib$lib linked from lib$lib.a"; else bad "lib$lib.a not on the link line"; fi
done
if grep -q '^HIREDIS_FOUND:INTERNAL=1' "$tmp/b/CMakeCache.txt"; then
	if printf '%s\n' "$words" | grep -q 'libhiredis\.a$'; then ok "hiredis linked from libhiredis.a"; else bad "hiredis found but libhiredis.a not on the link line"; fi
else
	echo "note: hiredis not found here; the broker is left out of this build"
fi
if [ -x build-prebuilt/passfs ]; then
	extra=$(ldd build-prebuilt/passfs | awk '{print $1}' |
		grep -Ev '^(linux-vdso\.so\.1|lib(c|m|dl|pthread|rt)\.so\.[0-9]+|/lib64/ld-linux-x86-64\.so\.2)$' || true)
	[ -z "$extra" ] && ok "build-prebuilt/passfs: ldd shows libc/libm and the loader only" ||
		bad "build-prebuilt/passfs needs: $(echo $extra)"
fi
finish
