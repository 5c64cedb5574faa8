#!/bin/sh
# scripts/wine-test.sh: the Windows agent's tests, cross-compiled
# (GOOS=windows) and run under Debian's wine (make test-windows).
#
# Each package below has Windows tests that exercise real Windows code
# under wine: cmd.exe lines and job objects (modules/cmd), the registry
# grains (agent/grains), the Service Control Manager (agent/agentsvc,
# modules/service: wine's services.exe starts and stops the test binary as
# a service), GetDiskFreeSpaceEx (internal/fsstat), the beacons and pkg
# refusing what Windows lacks. What wine cannot run is listed in
# docs/install.md's support matrix: PowerShell (wine's powershell.exe is a
# stub that runs nothing: only the command lines are tested), service
# recovery actions (wine's SCM does not answer QueryServiceConfig2).
#
# Needs wine and wine64 (the Windows loader) and binutils-mingw-w64-x86-64
# (to link the bcryptprimitives.dll wine 8 lacks: Go's runtime needs its
# ProcessPrng since Go 1.22; the shim forwards it to advapi32's
# SystemFunction036, RtlGenRandom). WINEPREFIX (default
# $TMPDIR/brine-wine-UID) is made on first use (about 10 s) and kept.
set -eu

GO=${GO:-go}
PKGS=${WINE_TEST_PKGS:-"./modules/cmd ./agent/grains ./agent/agentsvc ./modules/service ./internal/fsstat ./beacons/inotify ./modules/pkg"}
export WINEPREFIX="${WINEPREFIX:-${TMPDIR:-/tmp}/brine-wine-$(id -u)}"
export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="

for tool in wine wineboot wineserver x86_64-w64-mingw32-as x86_64-w64-mingw32-ld; do
	command -v "$tool" >/dev/null || {
		echo "wine-test: $tool is missing: apt-get install --no-install-recommends wine wine64 binutils-mingw-w64-x86-64" >&2
		exit 1
	}
done

out=$(mktemp -d "${TMPDIR:-/tmp}/brine-wine-test.XXXXXX")
trap 'rm -rf "$out"; wineserver -k 2>/dev/null || true' EXIT

start=$(date +%s)
if [ ! -f "$WINEPREFIX/system.reg" ]; then
	echo "wine-test: making the wine prefix $WINEPREFIX"
	wineboot -i >/dev/null 2>&1
	wineserver -w
fi
sys32="$WINEPREFIX/drive_c/windows/system32"
if [ ! -f "$sys32/bcryptprimitives.dll" ]; then
	printf 'LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng = advapi32.SystemFunction036\n' >"$out/bcp.def"
	: >"$out/empty.s"
	x86_64-w64-mingw32-as -o "$out/empty.o" "$out/empty.s"
	x86_64-w64-mingw32-ld --dll -e 0 -o "$sys32/bcryptprimitives.dll" "$out/empty.o" "$out/bcp.def"
fi

failed=""
for pkg in $PKGS; do
	name=$(echo "$pkg" | tr / _ | sed 's/^\._//')
	exe="$out/$name.test.exe"
	if ! GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $GO test -c -o "$exe" "$pkg"; then
		failed="$failed $pkg(build)"
		continue
	fi
	t0=$(date +%s)
	# In the package's directory, as go test runs a test (testdata).
	if (cd "$pkg" && wine "$exe" -test.count=1 -test.timeout=5m >"$out/$name.log" 2>&1); then
		echo "ok   $pkg (windows/amd64 under wine) $(($(date +%s) - t0))s"
	else
		cat "$out/$name.log"
		echo "FAIL $pkg (windows/amd64 under wine)"
		failed="$failed $pkg"
	fi
done
echo "wine-test: $(($(date +%s) - start))s in all"
if [ -n "$failed" ]; then
	echo "wine-test: failed:$failed" >&2
	exit 1
fi
