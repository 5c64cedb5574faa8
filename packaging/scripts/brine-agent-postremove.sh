#!/bin/sh
# brine-agent (deb postrm, rpm %postun): only a purge (deb) removes the
# agent's key pair (pki_dir), the master key it pinned, the id it chose
# (minion_id) and its outbox; a remove or an upgrade keeps them, so that a
# reinstalled agent is the same minion to its master.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
if [ "$1" = purge ]; then
	rm -rf /etc/brine/pki/minion /etc/brine/minion_id /var/cache/brine/minion
	rmdir /etc/brine/pki /var/cache/brine 2>/dev/null || true
fi
