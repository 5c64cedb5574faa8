#!/bin/sh
# brine-agent (deb prerm, rpm %preun): on removal, not on an upgrade, stop
# the agent and withdraw the alternatives.
set -e
case "$1" in
remove | 0)
	. /usr/share/brine-agent/systemd.sh
	brine_unit_removed brine-agent.service
	. /usr/share/brine-agent/alternatives.sh
	for name in salt-minion salt-call; do
		brine_alt_remove "$name" /usr/bin/brine-agent
	done
	;;
esac
