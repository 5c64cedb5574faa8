# Shell functions the package scripts source: what a package does with its
# unit, only where systemd runs (a container or a chroot has none; there
# the unit's ExecStart is run by hand or by another supervisor).
#
# Debian's convention (dh_installsystemd) is followed on deb: enable and
# start on a first install, restart on an upgrade. On rpm, Fedora's and
# RHEL's: the unit is enabled only if a systemd preset says so, and only
# restarted, if it was running, on an upgrade.

# brine_unit_installed UNIT ARG1 ARG2: after the files are in place.
brine_unit_installed() {
	[ -d /run/systemd/system ] || return 0
	systemctl daemon-reload >/dev/null 2>&1 || true
	case "$2" in
	configure) # deb: $3 is the version upgraded from, empty on a first install
		if [ -z "$3" ]; then
			systemctl enable "$1" >/dev/null 2>&1 || true
			systemctl start "$1" || true
		else
			systemctl try-restart "$1" || true
		fi
		;;
	1) # rpm first install
		systemctl preset "$1" >/dev/null 2>&1 || true
		;;
	2) # rpm upgrade
		systemctl try-restart "$1" || true
		;;
	esac
}

# brine_unit_removed UNIT: before the files go.
brine_unit_removed() {
	[ -d /run/systemd/system ] || return 0
	systemctl disable --now "$1" >/dev/null 2>&1 || true
}
