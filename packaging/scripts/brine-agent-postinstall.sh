#!/bin/sh
# brine-agent (deb postinst, rpm %post): salt-minion and salt-call as
# alternatives that outrank brine's, then the unit.
set -e
. /usr/share/brine-agent/alternatives.sh
for name in salt-minion salt-call; do
	brine_alt_install "$name" /usr/bin/brine-agent 20
done
. /usr/share/brine-agent/systemd.sh
brine_unit_installed brine-agent.service "$1" "$2"
