#!/bin/sh
# brine (deb preinst, rpm %pre): the master's system user, created before
# the files are unpacked so that /var/lib/brine is brine's from the start.
set -e
if ! getent group brine >/dev/null; then
	groupadd --system brine
fi
if ! getent passwd brine >/dev/null; then
	useradd --system --gid brine --home-dir /var/lib/brine --no-create-home \
		--shell /usr/sbin/nologin --comment "brine master" brine
fi
