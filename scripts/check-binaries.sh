#!/bin/sh
# check-binaries.sh BRINE AGENT [EXPECTED_VERSION]: fails, naming what is
# wrong, unless both binaries are
#   - no bigger than their limits (brine 70 MB, brine-agent 25 MB, stripped),
#     so that their size cannot creep: a new dependency that drags an SDK in
#     shows here, not on the fleet;
#   - static: built with CGO_ENABLED=0, no ELF interpreter, ldd says "not a
#     dynamic executable", so they run on any Linux (Debian 11, RHEL 8,
#     Alpine) whatever its libc;
#   - stripped and built with -trimpath;
#   - stamped: `version` prints EXPECTED_VERSION (default: git describe).
# make sizes (part of make test) runs it on bin/brine and bin/brine-agent.
set -u
BRINE_MAX=${BRINE_MAX:-70000000}
AGENT_MAX=${AGENT_MAX:-25000000}
brine=${1:?usage: check-binaries.sh BRINE AGENT [EXPECTED_VERSION]}
agent=${2:?usage: check-binaries.sh BRINE AGENT [EXPECTED_VERSION]}
want=${3:-$(git describe --tags --always --dirty 2>/dev/null)}
GO=${GO:-go}
fail=0

bad() {
	echo "check-binaries: $*" >&2
	fail=1
}

check() {
	bin=$1 max=$2 before=$fail
	fail=0
	if [ ! -x "$bin" ]; then
		bad "$bin: missing (make build makes it)"
		return
	fi
	size=$(wc -c <"$bin" | tr -d ' ')
	if [ "$size" -gt "$max" ]; then
		bad "$bin: $size bytes, over its limit of $max (go tool nm -size -sort size on an unstripped build says what grew)"
	fi
	info=$($GO version -m "$bin") || { bad "$bin: go version -m failed"; return; }
	echo "$info" | grep -q 'build[[:space:]]*CGO_ENABLED=0' || bad "$bin: not built with CGO_ENABLED=0"
	echo "$info" | grep -q 'build[[:space:]]*-trimpath=true' || bad "$bin: not built with -trimpath"
	# -trimpath leaves -ldflags out of the build information: the ELF
	# sections say whether the symbols (-s) and DWARF (-w) are gone.
	sections=$(readelf -S -W "$bin") || { bad "$bin: readelf -S failed (it needs binutils)"; return; }
	case $sections in
	*" .symtab "* | *" .debug_"*) bad "$bin: not stripped (build with -ldflags '-s -w')" ;;
	esac
	if readelf -l -W "$bin" | grep -q INTERP; then
		bad "$bin: has an ELF interpreter (dynamically linked)"
	fi
	ldd_out=$(ldd "$bin" 2>&1)
	case $ldd_out in
	*"not a dynamic executable"* | *"statically linked"*) ;;
	*) bad "$bin: ldd lists libraries: $ldd_out" ;;
	esac
	got=$("$bin" version) || { bad "$bin version failed"; return; }
	case $got in
	*" version $want ("*) ;;
	*) bad "$bin version printed '$got', want version $want (stamped with -X …/cli/agentcmd.version)" ;;
	esac
	[ $fail = 0 ] && echo "$bin: $size bytes (limit $max), static, stripped, version $want"
	[ $before = 0 ] || fail=1
}

check "$brine" "$BRINE_MAX"
check "$agent" "$AGENT_MAX"
exit $fail
