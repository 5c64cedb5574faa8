#!/usr/bin/env bash
# The brine demo: a master on embedded defaults in a temporary directory, a
# watcher printing events as salt-run state.event does, and a few events sent
# from another process. Exits 0 only if every event was seen; cleans up after
# itself, also on Ctrl-C.
set -euo pipefail
BRINE=${1:-bin/brine}
BRINE=$(cd "$(dirname "$BRINE")" && pwd)/$(basename "$BRINE")
work=$(mktemp -d -t brine-demo.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# High loopback ports so the demo never collides with a real Salt master.
mkdir -p "$work/etc"
cat > "$work/etc/master" <<CONF
id: demo
data_dir: $work/data
publish_port: 24505
ret_port: 24506
log_level: info
CONF
export BRINE_DATA="$work/data"
client=(-c "$work/etc")

say "starting the master (embedded NATS JetStream, data in $work/data)"
"$BRINE" master "${client[@]}" 2> "$work/master.log" &
pids+=($!)
for _ in $(seq 1 100); do
	[ -s "$work/data/master.key" ] && "$BRINE" event send "${client[@]}" demo/ping >/dev/null 2>&1 && break
	sleep 0.1
done

say "watching 'demo/*' (tag<TAB>json, like salt-run state.event)"
"$BRINE" event watch "${client[@]}" 'demo/*' --count 4 > "$work/watch.out" &
watcher=$!
pids+=($watcher)
sleep 0.5

say "sending events from another process"
"$BRINE" event send "${client[@]}" demo/deploy/start app=web version=42 canary=yes
"$BRINE" event send "${client[@]}" demo/deploy/done '{"app": "web", "hosts": ["web1", "web2"], "ok": true}'
"$BRINE" event send "${client[@]}" other/ignored note='not matched by the watcher'
"$BRINE" event send "${client[@]}" demo/vm/created name=web1 ip=10.20.0.11
"$BRINE" event send "${client[@]}" demo/vm/destroyed name=web1

say "refused: a reserved tag from a client"
if "$BRINE" event send "${client[@]}" salt/job/1/new fun=cmd.run 2>&1; then
	echo "demo: FAILED — a reserved tag was accepted" >&2
	exit 1
fi

wait "$watcher"
say "what the watcher printed"
cat "$work/watch.out"

say "replaying the log from the start (--since) with --pretty"
"$BRINE" event watch "${client[@]}" 'demo/vm/*' --since 1h --count 2 --pretty

lines=$(wc -l < "$work/watch.out")
if [ "$lines" -ne 4 ] || grep -q other/ignored "$work/watch.out"; then
	echo "demo: FAILED — expected exactly the 4 demo/* events, got $lines lines" >&2
	exit 1
fi
say "demo passed: 4 events sent, stored durably, watched and replayed"
