#!/usr/bin/env bash
# make interop: the differential suites against a live Salt. Salt renders
# every suite's cases (scripts/salt-oracle.py) into a fresh file, which must
# equal the saved one under testdata/salt (locally it replaces it, and git
# shows what changed; under CI a difference fails: the saved outputs had
# drifted from Salt's); then brine's tests compare with the fresh outputs.
#
# Salt comes from SALT_SRC (an unpacked Salt tree: the directory holding
# the `salt` package) or from ../shared/peers/salt-3006.6.tar.gz.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

src=${SALT_SRC:-}
if [ -z "$src" ]; then
	tarball=${SALT_TARBALL:-../shared/peers/salt-3006.6.tar.gz}
	if [ ! -f "$tarball" ]; then
		echo "make interop: no Salt to compare with: set SALT_SRC=/path/to/salt-tree (an unpacked Salt release) or put salt-3006.6.tar.gz at $tarball" >&2
		exit 1
	fi
	tar xzf "$tarball" -C "$tmp"
	src=$(dirname "$(find "$tmp" -maxdepth 3 -type d -name salt -path '*/salt' | head -n 1)")
fi
[ -d "$src/salt" ] || { echo "make interop: $src holds no salt package" >&2; exit 1; }

status=0
envs=()
for dir in testdata/salt/*/; do
	suite=$(basename "$dir")
	[ -f "$dir/cases.yaml" ] || continue
	fresh="$tmp/$suite.json"
	echo "== Salt renders testdata/salt/$suite"
	/usr/bin/python3 scripts/salt-oracle.py --suite "$suite" --salt "$src" --cases "$dir/cases.yaml" --grains testdata/salt/grains.yaml --out "$fresh" 2>"$tmp/$suite.log" || {
		cat "$tmp/$suite.log" >&2; exit 1; }
	saved="$dir/salt-3006.6.json"
	if ! cmp -s "$fresh" "$saved"; then
		if [ "${CI:-}" = true ]; then
			echo "make interop: Salt's outputs for $suite differ from the saved $saved:" >&2
			diff -u "$saved" "$fresh" | head -n 60 >&2 || true
			status=1
		else
			cp "$fresh" "$saved"
			echo "   $saved updated from Salt (see git diff)"
		fi
	fi
	envs+=("SALTDIFF_ORACLE_$(echo "$suite" | tr '[:lower:]' '[:upper:]')=$fresh")
done
# The formulas in test mode: live only (the answers depend on this
# machine), Salt's salt-call --local beside brine's `brine call --local`.
echo "== the formulas in test mode: Salt and brine, masterless, on this machine"
go build -o "$tmp/brine" ./cmd/brine
rc=0
env "${envs[@]}" SALT_SRC="$src" BRINE_BIN="$tmp/brine" go test -tags interop -count=1 -v -run 'AsSalt|TestFormulasTestModeLive' ./internal/saltdiff/ >"$tmp/test.log" 2>&1 || rc=$?
grep -E 'render as Salt|as Salt does|^(--- |ok|FAIL)' "$tmp/test.log" || true
if [ $rc -ne 0 ]; then
	grep -vE '^(=== |    --- PASS)' "$tmp/test.log" | head -n 200 >&2
	status=1
fi
exit $status
