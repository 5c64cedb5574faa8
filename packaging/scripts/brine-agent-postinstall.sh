#!/bin/sh
# brine-agent (deb postinst, rpm %post): salt-minion and salt-call as
# alternatives that outrank brine's, then the unit.
set -e
. /usr/share/brine-agent/alternatives.sh
brine_alt_install salt-minion /usr/bin/brine-agent 20 brine-agent
brine_alt_install salt-call /usr/bin/brine-agent 20 brine-agent-call
. /usr/share/brine-agent/systemd.sh
brine_unit_installed brine-agent.service "$1" "$2"
