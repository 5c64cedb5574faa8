#!/bin/sh
# brine (deb prerm, rpm %preun): on removal (deb "remove", rpm 0; not on
# an upgrade) stop the master and withdraw the alternatives.
set -e
case "$1" in
remove | 0)
	. /usr/share/brine/systemd.sh
	brine_unit_removed brine-master.service
	. /usr/share/brine/alternatives.sh
	for name in salt salt-key salt-run salt-cloud salt-master salt-call salt-minion; do
		brine_alt_remove "$name" /usr/bin/brine
	done
	;;
esac
