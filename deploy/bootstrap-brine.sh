#!/bin/sh
# bootstrap-brine: brine's built-in deploy script, what salt-cloud's
# bootstrap-salt is to salt-minion. The deploy step has uploaded, to this
# directory, the brine-agent binary for this machine (its sha256 already
# checked), the agent's configuration salt-cloud would write (minion) and
# the systemd unit (brine-agent.service). It runs as root (or under sudo)
# and needs nothing from the internet.
#
# It installs the agent to /usr/bin (/usr/local/bin where /usr is read-only,
# and on FreeBSD and macOS), the configuration to /etc/brine/minion (0600),
# and starts the agent: as the brine-agent service where systemd is the
# init system, otherwise detached, logging to /var/log/brine-agent.log.
set -eu

conf=/etc/brine
os=$(uname -s)
bindir=/usr/bin
if [ "$os" != Linux ] || [ ! -w /usr/bin ]; then
	bindir=/usr/local/bin
fi
agent=$bindir/brine-agent

mkdir -p "$bindir" "$conf"
chmod 755 "$conf"
# A running agent's binary cannot be written over: install beside it, then
# rename over it (the running one keeps its inode until it is restarted).
install -m 755 brine-agent "$agent.new"
mv -f "$agent.new" "$agent"
echo "installed $agent ($(du -k "$agent" | cut -f1) KiB)"
install -m 600 minion "$conf/minion"
echo "wrote $conf/minion (mode 0600): $(sed -n 's/^id: //p' minion) reporting to master $(sed -n 's/^master: //p' minion)"

if [ "$os" = Linux ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	sed "s|^ExecStart=.*|ExecStart=$agent -c $conf|" brine-agent.service > /etc/systemd/system/brine-agent.service
	chmod 644 /etc/systemd/system/brine-agent.service
	systemctl daemon-reload
	systemctl enable brine-agent
	# restart, not start: a machine deployed again runs the new binary.
	systemctl restart brine-agent
	systemctl is-active brine-agent
	echo "brine-agent.service enabled and started (systemd)"
	exit 0
fi

# No service manager integration: start the agent detached, as its own
# session, so that it outlives this SSH session.
log=/var/log/brine-agent.log
pidfile=/var/run/brine-agent.pid
if [ "$os" = Linux ]; then
	echo "no systemd on this machine (/run/systemd/system is missing): starting the agent detached; it is not started again at boot"
else
	echo "$os: brine does no service manager integration here (rc.d, launchd): starting the agent detached; it is not started again at boot"
fi
if [ -s "$pidfile" ]; then
	old=$(cat "$pidfile")
	# Only if that pid is still an agent (busybox's ps has no -p: /proc).
	if kill -0 "$old" 2>/dev/null &&
		{ ps -p "$old" -o command= 2>/dev/null || tr '\0' ' ' < "/proc/$old/cmdline"; } 2>/dev/null | grep -q brine-agent; then
		kill "$old"
		echo "stopped the agent started by an earlier deploy (pid $old)"
		sleep 1
	fi
fi
mkdir -p "$(dirname "$log")"
if command -v setsid >/dev/null 2>&1; then
	setsid "$agent" -c "$conf" >> "$log" 2>&1 < /dev/null &
else
	nohup "$agent" -c "$conf" >> "$log" 2>&1 < /dev/null &
fi
pid=$!
echo "$pid" > "$pidfile"
# An agent that cannot start (a bad configuration) says so at once.
sleep 1
if ! kill -0 "$pid" 2>/dev/null; then
	echo "the agent exited at once; the end of $log:" >&2
	tail -n 20 "$log" >&2
	exit 1
fi
echo "brine-agent started (pid $pid), logging to $log"
