#!/bin/sh
# brine (deb postinst, rpm %post): Salt's command names as alternatives,
# then the unit. deb: $1 is "configure", $2 the version upgraded from (empty
# on a first install); rpm: $1 is 1 on install, 2 on upgrade.
set -e
. /usr/share/brine/alternatives.sh
brine_alt_install salt /usr/bin/brine 20 brine-exec
brine_alt_install salt-key /usr/bin/brine 20 brine-key
brine_alt_install salt-run /usr/bin/brine 20 brine-run
brine_alt_install salt-cloud /usr/bin/brine 20 brine-cloud
brine_alt_install salt-master /usr/bin/brine 20 brine-master
# salt-call and salt-minion answer from brine too, below brine-agent's
# priority: brine-agent, when installed, is the one they run. (brine's
# package has no page for `brine agent`: brine-agent's brine-agent.1 is it.)
brine_alt_install salt-call /usr/bin/brine 10 brine-call
brine_alt_install salt-minion /usr/bin/brine 10
# data_dir is brine's even where it existed before the package (a tarball
# install's); its contents are not chowned here (a recursive chown as root
# follows what the tree holds): docs/install.md says to do it once by hand.
chown brine:brine /var/lib/brine
. /usr/share/brine/systemd.sh
brine_unit_installed brine-master.service "$1" "$2"
