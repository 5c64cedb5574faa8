#!/bin/bash
# packages-test.sh [DIST] — the packages end to end, as an administrator
# meets them: install dist/'s brine and brine-agent .deb with dpkg, check
# the files, the brine user, the alternatives, the units (systemd-analyze
# verify), the man pages and the completion scripts; start the master and
# an agent from the installed files by running each unit's ExecStart (as
# its User=; no systemd needed), accept the agent's key with the installed
# salt-key and run `salt '*' test.ping` through the installed salt; upgrade
# to a higher version and check that configuration and keys survived and
# the agent answers without being accepted again; purge both and check
# that nothing is left. make test runs it after make packages.
#
# It installs into this system (/usr/bin, /etc/brine, /var/lib/brine), so
# it needs root and refuses to run where brine is installed by anything
# but an earlier run of itself; whatever happens it purges what it
# installed, so it can run again.
set -euo pipefail
# Under pipefail, `cmd | grep -q` fails when grep exits at its first match
# while cmd still writes (update-alternatives writes line by line, and dies
# of SIGPIPE): the checks below let grep read to the end instead.

DIST=${1:-dist}
# The marker says "installed by this test": a run that was killed leaves
# it, and the next run then purges what that one left.
MARKER=/var/tmp/brine-packages-test.installed
TEST_MASTER_CONF=/etc/brine/master.d/90-packages-test.conf
TEST_MINION_CONF=/etc/brine/minion.d/90-packages-test.conf
AGENT_ID=packages-test-agent
t0=$(date +%s)
passed=0
pids=()
work=$(mktemp -d /tmp/brine-packages-test.XXXXXX)

fail() {
	echo "packages-test: FAIL: $*" >&2
	for log in "$work"/*.log; do
		[ -s "$log" ] && { echo "--- $log (last lines)" >&2; tail -n 20 "$log" >&2; }
	done
	echo "packages-test: $passed passed, 1 failed" >&2
	exit 1
}
ok() { passed=$((passed + 1)); }
step() { echo "== packages-test: $* (at $(($(date +%s) - t0)) s)"; }

stop_all() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	pids=()
}

# dpkg_wait ARGS...: dpkg, waiting up to 5 minutes for the lock another
# install on this machine holds (a test installing a package, apt-get).
dpkg_wait() {
	local deadline=$(($(date +%s) + 300))
	while :; do
		if DEBIAN_FRONTEND=noninteractive dpkg "$@" >"$work/dpkg.out" 2>&1; then
			cat "$work/dpkg.out"
			return 0
		fi
		if ! grep -q 'lock' "$work/dpkg.out" || [ "$(date +%s)" -ge "$deadline" ]; then
			cat "$work/dpkg.out"
			return 1
		fi
		sleep 1
	done
}

purge() {
	rm -f "$TEST_MASTER_CONF" "$TEST_MINION_CONF"
	dpkg_wait --purge brine-agent brine >"$work/purge.log" 2>&1
}

cleanup() {
	stop_all
	if [ -e "$MARKER" ]; then
		purge || true
		rm -f "$MARKER"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || fail "needs root: it installs the packages into this system with dpkg"
for need in dpkg:dpkg dpkg-deb:dpkg update-alternatives:dpkg systemd-analyze:systemd setpriv:util-linux \
	man:man-db ss:iproute2 bash:bash sha256sum:coreutils rpm:rpm; do
	command -v "${need%%:*}" >/dev/null || fail "needs ${need%%:*} (Debian package ${need#*:})"
done

arch=$(dpkg --print-architecture)
deb_brine=$(ls "$DIST"/brine_*_"$arch".deb 2>/dev/null | head -n 1)
deb_agent=$(ls "$DIST"/brine-agent_*_"$arch".deb 2>/dev/null | head -n 1)
[ -n "$deb_brine" ] && [ -n "$deb_agent" ] || fail "no brine_*_$arch.deb and brine-agent_*_$arch.deb in $DIST (make packages makes them)"
rpm_brine=$(ls "$DIST"/brine-[0-9]*.rpm 2>/dev/null | head -n 1)
rpm_agent=$(ls "$DIST"/brine-agent-[0-9]*.rpm 2>/dev/null | head -n 1)
[ -n "$rpm_brine" ] && [ -n "$rpm_agent" ] || fail "no brine-*.rpm and brine-agent-*.rpm in $DIST (make packages makes them)"

for p in brine brine-agent; do
	if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -v '^not-installed$' >/dev/null; then
		[ -e "$MARKER" ] || fail "$p is installed, and not by this test: it would replace it (dpkg --purge $p first)"
	fi
done
if [ -e "$MARKER" ]; then
	step "purging what an interrupted run left"
	purge || fail "dpkg --purge of the last run's packages: $(cat "$work/purge.log")"
	rm -f "$MARKER"
fi
for n in salt salt-key salt-run salt-cloud salt-master salt-call salt-minion; do
	[ ! -e "/usr/bin/$n" ] || fail "/usr/bin/$n exists already (a Salt install?): this test checks the alternatives brine installs there"
done

step "dpkg -i $(basename "$deb_brine") $(basename "$deb_agent")"
touch "$MARKER"
dpkg_wait -i "$deb_brine" "$deb_agent" >"$work/install.log" 2>&1 ||
	fail "dpkg -i: $(cat "$work/install.log")"
# A maintainer script's warning (update-alternatives, useradd, systemctl)
# is a fault even when dpkg succeeds.
! grep -qi 'warning\|error' "$work/install.log" || fail "dpkg -i warned: $(grep -i 'warning\|error' "$work/install.log")"
ok

step "installed files, user, alternatives, units, man pages, completion"
for f in /usr/bin/brine /usr/bin/brine-agent; do
	[ -x "$f" ] || fail "$f is not installed"
done
ok
dpkg-query -W -f='${Conffiles}\n' brine | grep '^ /etc/brine/master ' >/dev/null || fail "/etc/brine/master is not a conffile of brine"
dpkg-query -W -f='${Conffiles}\n' brine-agent | grep '^ /etc/brine/minion ' >/dev/null || fail "/etc/brine/minion is not a conffile of brine-agent"
grep -q '^data_dir: /var/lib/brine$' /etc/brine/master || fail "/etc/brine/master does not set data_dir: /var/lib/brine"
grep -q '^master: salt$' /etc/brine/minion || fail "/etc/brine/minion does not say master: salt"
ok
IFS=: read -r _ _ uid _ _ home shell < <(getent passwd brine) || fail "no user brine"
[ "$uid" -lt 1000 ] && [ "$home" = /var/lib/brine ] && [ "$shell" = /usr/sbin/nologin ] ||
	fail "user brine: uid $uid home $home shell $shell; want a system user (uid < 1000), /var/lib/brine, /usr/sbin/nologin"
[ "$(stat -c '%U:%G %a' /var/lib/brine)" = "brine:brine 750" ] ||
	fail "/var/lib/brine is $(stat -c '%U:%G %a' /var/lib/brine), want brine:brine 750"
ok
for n in salt salt-key salt-run salt-cloud salt-master; do
	[ "$(readlink -f "/usr/bin/$n")" = /usr/bin/brine ] || fail "/usr/bin/$n leads to $(readlink -f "/usr/bin/$n"), want /usr/bin/brine"
	[ "$(readlink "/usr/bin/$n")" = "/etc/alternatives/$n" ] || fail "/usr/bin/$n is not an alternative"
done
for n in salt-call salt-minion; do
	[ "$(readlink -f "/usr/bin/$n")" = /usr/bin/brine-agent ] || fail "/usr/bin/$n leads to $(readlink -f "/usr/bin/$n"), want /usr/bin/brine-agent (priority 20 over brine's 10)"
	update-alternatives --query "$n" | grep '^Alternative: /usr/bin/brine$' >/dev/null || fail "brine is not the second $n alternative"
done
ok
for u in brine-master brine-agent; do
	[ -f "/usr/lib/systemd/system/$u.service" ] || fail "$u.service is not installed"
	systemd-analyze verify "/usr/lib/systemd/system/$u.service" >"$work/verify-$u.log" 2>&1 ||
		fail "systemd-analyze verify $u.service: $(cat "$work/verify-$u.log")"
	# It exits 0 on an unknown key or section (only warning): any word
	# from it is a failure here.
	[ ! -s "$work/verify-$u.log" ] || fail "systemd-analyze verify $u.service warns: $(cat "$work/verify-$u.log")"
done
ok
man -P cat brine-key >"$work/man-key.txt" 2>/dev/null || fail "man brine-key: no page"
for want in brine-key --accept --yes --import-salt; do
	grep -q -- "$want" "$work/man-key.txt" || fail "man brine-key does not mention $want"
done
man -w brine-agent brine-agent-call brine-master brine-exec >/dev/null 2>&1 || fail "a man page of brine-agent, brine-agent-call, brine-master or brine-exec is missing"
# Salt's names lead to the pages of what they run.
for pair in salt:brine-exec salt-key:brine-key salt-run:brine-run salt-cloud:brine-cloud salt-master:brine-master \
	salt-call:brine-agent-call salt-minion:brine-agent; do
	page=$(readlink -f "$(man -w "${pair%%:*}" 2>/dev/null)") || true
	[ "$page" = "/usr/share/man/man1/${pair#*:}.1.gz" ] || fail "man ${pair%%:*} is ${page:-missing}, want ${pair#*:}'s page"
done
ok
for f in /usr/share/bash-completion/completions/brine /usr/share/bash-completion/completions/brine-agent; do
	bash -n "$f" || fail "bash -n $f"
	grep -q __complete "$f" || fail "$f does not ask the binary (__complete)"
done
for f in /usr/share/zsh/vendor-completions/_brine /usr/share/zsh/vendor-completions/_brine-agent \
	/usr/share/fish/vendor_completions.d/brine.fish /usr/share/fish/vendor_completions.d/brine-agent.fish; do
	[ -s "$f" ] || fail "$f is not installed"
done
ok

step "the .rpm: %config(noreplace), scriptlets, and its files as rpm unpacks them (into a scratch root, no scriptlets)"
rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$rpm_brine" 2>/dev/null | grep -x '/etc/brine/master cn' >/dev/null ||
	fail "$rpm_brine: /etc/brine/master is not %config(noreplace)"
rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$rpm_agent" 2>/dev/null | grep -x '/etc/brine/minion cn' >/dev/null ||
	fail "$rpm_agent: /etc/brine/minion is not %config(noreplace)"
rpm -qp --scripts "$rpm_brine" >"$work/rpm-scripts.txt" 2>/dev/null
for s in preinstall postinstall preuninstall postuninstall; do
	grep -q "^$s scriptlet" "$work/rpm-scripts.txt" || fail "$rpm_brine has no $s scriptlet"
done
rpm -qp --scripts "$rpm_agent" >"$work/rpm-scripts.txt" 2>/dev/null
for s in postinstall preuninstall postuninstall; do
	grep -q "^$s scriptlet" "$work/rpm-scripts.txt" || fail "$rpm_agent has no $s scriptlet"
done
rpm --root "$work/rpmroot" --initdb
rpm --root "$work/rpmroot" -i --nodeps --noscripts "$rpm_brine" "$rpm_agent" >"$work/rpm.log" 2>&1 ||
	fail "rpm -i into a scratch root: $(cat "$work/rpm.log")"
for f in /usr/bin/brine /usr/bin/brine-agent /usr/lib/systemd/system/brine-master.service \
	/usr/lib/systemd/system/brine-agent.service /etc/brine/master /etc/brine/minion; do
	cmp -s "$work/rpmroot$f" "$f" || fail "the .rpm's $f differs from the .deb's"
done
[ -s "$work/rpmroot/usr/share/zsh/site-functions/_brine" ] || fail "the .rpm has no zsh completion in /usr/share/zsh/site-functions"
rm -rf "$work/rpmroot"
ok

# A port pair nothing listens on, so that a master of another test on this
# machine is never the one answering.
while :; do
	pub=$((20000 + RANDOM % 20000))
	ret=$((pub + 1))
	if ! ss -Hltn "( sport = :$pub or sport = :$ret )" | grep . >/dev/null; then
		break
	fi
done
cat >"$TEST_MASTER_CONF" <<EOF
# packages-test.sh: loopback high ports of its own.
publish_port: $pub
ret_port: $ret
EOF
cat >"$TEST_MINION_CONF" <<EOF
# packages-test.sh: the master it started, on loopback.
master: 127.0.0.1
master_port: $ret
publish_port: $pub
id: $AGENT_ID
acceptance_wait_time: 1
EOF
# Local edits of the conffiles, which an upgrade must keep.
echo "# edited by packages-test.sh" >>/etc/brine/master
echo "# edited by packages-test.sh" >>/etc/brine/minion

# start_unit UNIT LOG: runs the installed unit's ExecStart as its User= and
# Group= (root when it names none), with systemd's clean environment.
start_unit() {
	local unit=/usr/lib/systemd/system/$1.service exec user group
	exec=$(sed -n 's/^ExecStart=//p' "$unit")
	user=$(sed -n 's/^User=//p' "$unit")
	group=$(sed -n 's/^Group=//p' "$unit")
	[ -n "$exec" ] || fail "$unit has no ExecStart"
	local -a argv
	read -ra argv <<<"$exec"
	if [ -n "$user" ]; then
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$(getent passwd "$user" | cut -d: -f6)" \
			setpriv --reuid="$user" --regid="${group:-$user}" --init-groups -- "${argv[@]}" >"$work/$2" 2>&1 &
	else
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "${argv[@]}" >"$work/$2" 2>&1 &
	fi
	pids+=($!)
}

# until_ok SECONDS WHAT CMD...: runs CMD every 0.2 s until it succeeds.
until_ok() {
	local deadline=$(($(date +%s) + $1)) what=$2
	shift 2
	until "$@" >"$work/last.out" 2>&1; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "$what: $(cat "$work/last.out")"
		sleep 0.2
	done
}

pinged() { salt --timeout 5 '*' test.ping >"$work/ping.out" 2>&1 && grep -q True "$work/ping.out" && cat "$work/ping.out"; }
listed() { salt-key -L | tee "$work/keys.out" | grep "$1" >/dev/null; }
accepted() { salt-key -L --json | grep "\"minions\":\[\"$AGENT_ID\"\]" >/dev/null; }

step "start the master (brine-master.service's ExecStart, as brine) and an agent (brine-agent.service's)"
start_unit brine-master master.log
until_ok 30 "the master did not answer salt-key -L" salt-key -L
start_unit brine-agent agent.log
until_ok 30 "the agent's key never reached the master" listed "$AGENT_ID"
ok
salt-key -y -a "$AGENT_ID" >"$work/accept.out" 2>&1 || fail "salt-key -a $AGENT_ID: $(cat "$work/accept.out")"
until_ok 30 "salt '*' test.ping never answered True" pinged
cat "$work/ping.out"
ok
salt-call --local test.ping >"$work/call.out" 2>&1 && grep -q True "$work/call.out" ||
	fail "salt-call --local test.ping (brine-agent): $(cat "$work/call.out")"
ok
if notbrine=$(find /var/lib/brine ! -user brine | head -n 3) && [ -n "$notbrine" ]; then
	fail "files in /var/lib/brine the master (user brine) does not own, made by root's CLI?: $notbrine"
fi
ok

step "upgrade both to a higher version"
stop_all
sums() { sha256sum /etc/brine/pki/minion/* /var/lib/brine/master.key; }
sums >"$work/keys.before" || fail "the agent's pki_dir or the master's key is missing"
old=$(dpkg-query -W -f='${Version}' brine)
new=$(echo "$old" | sed 's/-\([0-9]*\)$//').1-1
for deb in "$deb_brine" "$deb_agent"; do
	rm -rf "$work/repack"
	dpkg-deb -R "$deb" "$work/repack"
	sed -i "s/^Version: .*/Version: $new/" "$work/repack/DEBIAN/control"
	dpkg-deb -Zgzip -z1 -b "$work/repack" "$work/$(basename "$deb" .deb).next.deb" >/dev/null
done
rm -rf "$work/repack"
dpkg_wait -i "$work"/brine_*.next.deb "$work"/brine-agent_*.next.deb >"$work/upgrade.log" 2>&1 ||
	fail "dpkg -i (upgrade): $(cat "$work/upgrade.log")"
! grep -qi 'warning\|error' "$work/upgrade.log" || fail "dpkg -i (upgrade) warned: $(grep -i 'warning\|error' "$work/upgrade.log")"
[ "$(dpkg-query -W -f='${Version}' brine)" = "$new" ] && [ "$(dpkg-query -W -f='${Version}' brine-agent)" = "$new" ] ||
	fail "after the upgrade brine is $(dpkg-query -W -f='${Version}' brine), want $new"
ok
for f in /etc/brine/master /etc/brine/minion; do
	grep -q '^# edited by packages-test.sh$' "$f" || fail "the upgrade replaced the edited $f"
done
[ -f "$TEST_MASTER_CONF" ] && [ -f "$TEST_MINION_CONF" ] || fail "the upgrade removed master.d/ or minion.d/ files"
sums | cmp -s - "$work/keys.before" || fail "the upgrade changed the agent's or the master's keys"
ok
start_unit brine-master master2.log
until_ok 30 "the upgraded master did not list $AGENT_ID as accepted" accepted
start_unit brine-agent agent2.log
until_ok 30 "salt '*' test.ping never answered True after the upgrade" pinged
ok

step "purge both"
stop_all
purge || fail "dpkg --purge: $(cat "$work/purge.log")"
rm -f "$MARKER"
! grep -qi 'warning\|error' "$work/purge.log" || fail "dpkg --purge warned: $(grep -i 'warning\|error' "$work/purge.log")"
for f in /usr/bin/brine /usr/bin/brine-agent /usr/lib/systemd/system/brine-master.service \
	/usr/lib/systemd/system/brine-agent.service /etc/brine /var/lib/brine /var/cache/brine /usr/share/brine \
	/usr/share/man/man1/brine-key.1.gz /usr/share/man/man1/salt-key.1.gz; do
	[ ! -e "$f" ] || fail "$f is left after the purge: $(find "$f" | head -n 5 | tr '\n' ' ')"
done
for n in salt salt-key salt-run salt-cloud salt-master salt-call salt-minion; do
	[ ! -e "/usr/bin/$n" ] && [ ! -L "/usr/bin/$n" ] || fail "/usr/bin/$n is left after the purge"
	! update-alternatives --query "$n" >/dev/null 2>&1 || fail "the $n alternative is left after the purge"
done
! getent passwd brine >/dev/null || fail "the user brine is left after the purge"
! getent group brine >/dev/null || fail "the group brine is left after the purge"
ok

echo "packages-test: $passed passed, 0 failed in $(($(date +%s) - t0)) s"
