#!/bin/sh
# brine (deb postinst, rpm %post): Salt's command names as alternatives,
# then the unit. deb: $1 is "configure", $2 the version upgraded from (empty
# on a first install); rpm: $1 is 1 on install, 2 on upgrade.
set -e
. /usr/share/brine/alternatives.sh
for name in salt salt-key salt-run salt-cloud salt-master; do
	brine_alt_install "$name" /usr/bin/brine 20
done
# salt-call and salt-minion answer from brine too, below brine-agent's
# priority: brine-agent, when installed, is the one they run.
for name in salt-call salt-minion; do
	brine_alt_install "$name" /usr/bin/brine 10
done
# data_dir is brine's even where it existed before the package (a tarball
# install's); its contents are not chowned here (a recursive chown as root
# follows what the tree holds): docs/install.md says to do it once by hand.
chown brine:brine /var/lib/brine
. /usr/share/brine/systemd.sh
brine_unit_installed brine-master.service "$1" "$2"
