#!/bin/sh
# brine (deb postrm, rpm %postun): only a purge (deb) removes what the
# master made: its data_dir (event store, keys, jobs) and its user. A
# remove or an upgrade keeps them; rpm has no purge, so an erase keeps them
# too (docs/install.md says what to delete by hand).
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
if [ "$1" = purge ]; then
	rm -rf /var/lib/brine
	if getent passwd brine >/dev/null; then
		userdel brine >/dev/null 2>&1 || true
	fi
	if getent group brine >/dev/null; then
		groupdel brine >/dev/null 2>&1 || true
	fi
fi
