#!/bin/sh
# A deploy script for tests: it reports who runs it, where and with what,
# and leaves a marker file where script_env says, with the minion
# configuration salt-cloud leaves beside the script copied next to it.
set -e
echo "hello from $(id -un) in $(pwd)"
echo "args: $*"
echo "role=$ROLE"
echo "a line on stderr" >&2
if [ -n "$MARKER" ]; then
	printf '%s %s\n' "$ROLE" "$*" > "$MARKER"
	cp minion "$MARKER.minion"
fi
