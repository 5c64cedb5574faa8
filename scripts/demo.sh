#!/usr/bin/env bash
# The provisioning demo: brine creates three VMs on govmomi's vCenter
# simulator in parallel and deploys them over SSH, and everything else
# follows from the lifecycle events, with real peers on loopback high ports
# in a temporary directory: an OpenSSH sshd playing the VMs' guests (the
# simulator hands out loopback addresses it listens on), BIND 9
# (TSIG-protected forward and reverse zones, updated by Salt-format reaction
# files on deploy_script and destroyed), dnsmasq (hosts and DHCP
# reservations written from the mine), and a Slack audit trail captured by a
# local stand-in for Slack's Web API (or a real workspace when SLACK_TOKEN
# and SLACK_CHANNEL are set).
# Exits 0 only if every check passed; cleans up after itself, also on Ctrl-C.
set -euo pipefail
BRINE=${1:-bin/brine}
BRINE=$(cd "$(dirname "$BRINE")" && pwd)/$(basename "$BRINE")
examples=$(cd "$(dirname "$0")/../examples" && pwd)
work=$(mktemp -d -t brine-demo.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -f "$work/bind/named.pid" ] && kill "$(cat "$work/bind/named.pid")" 2>/dev/null || true
	[ -f "$work/dnsmasq/dnsmasq.pid" ] && kill "$(cat "$work/dnsmasq/dnsmasq.pid")" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Colour only on a terminal, and not when NO_COLOR is set, as brine does.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
	c_bold=$'\033[1m' c_pass=$'\033[32m' c_fail=$'\033[31m' c_off=$'\033[0m'
else
	c_bold='' c_pass='' c_fail='' c_off=''
fi
bold() { printf '\n%s== %s%s\n' "$c_bold" "$*" "$c_off"; }
checks=() failed=0
check() { # check NAME COMMAND… — record whether COMMAND succeeds
	local name=$1; shift
	if "$@" >/dev/null 2>&1; then checks+=("${c_pass}PASS${c_off}  $name"); else checks+=("${c_fail}FAIL${c_off}  $name"); failed=$((failed + 1)); fi
}
port() { # port [TAKEN...] — a loopback port free for both TCP and UDP (DNS servers bind both), not TAKEN,
	# below the kernel's ephemeral range, where no outgoing connection can take it before our server binds it
	python3 - "$@" <<'PY'
import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
taken = set(sys.argv[1:])
while True:
    p = random.randint(10000, low - 1)
    if str(p) in taken:
        continue
    t, u = socket.socket(), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        t.bind(("127.0.0.1", p)); u.bind(("127.0.0.1", p)); print(p); break
    except OSError:
        pass
    finally:
        u.close(); t.close()
PY
}
deployed() { # deployed VM ADDRESS — deploy_script fired with host ADDRESS, and the script ran there
	python3 - "$work/deploy_script.events" "$@" <<'PY' && grep -qx "deployed $2 with role web by root" "$work/deployed/$2"
import json, sys
events, vm, addr = sys.argv[1:]
tags = dict(l.rstrip("\n").split("\t", 1) for l in open(events))
sys.exit(json.loads(tags.get(f"salt/cloud/{vm}/deploy_script", "{}")).get("host") != addr)
PY
}
waitfor() { # waitfor SECONDS COMMAND…
	local until=$((SECONDS + $1)); shift
	until "$@" >/dev/null 2>&1; do [ $SECONDS -ge $until ] && return 1; sleep 0.2; done
}

for cmd in named dnsmasq dig tsig-keygen setpriv python3 /usr/sbin/sshd ssh-keygen; do
	command -v "$cmd" >/dev/null || { echo "demo: $cmd is missing (make demo installs bind9, bind9-dnsutils, dnsmasq-base, openssh-server)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "demo: run as root (sshd must run as root to log the deploy step in)" >&2; exit 1; }

PUB=$(port); REQ=$(port $PUB); VC=$(port $PUB $REQ); NS=$(port $PUB $REQ $VC); DM=$(port $PUB $REQ $VC $NS)
SL=$(port $PUB $REQ $VC $NS $DM); SSH=$(port $PUB $REQ $VC $NS $DM $SL)
mkdir -p "$work"/{etc/master.d,etc/cloud.profiles.d,etc/cloud.deploy.d,bind,dnsmasq,reactor,data,ssh,deployed}

bold "BIND 9 on 127.0.0.1:$NS with a TSIG key, zone example.test and 20.127.in-addr.arpa"
tsig-keygen -a hmac-sha256 ddns-key > "$work/bind/ddns.key"
secret=$(sed -n 's/.*secret "\(.*\)";/\1/p' "$work/bind/ddns.key")
printf '{"ddns-key.": "%s"}\n' "$secret" > "$work/etc/ddns.keyring"
chmod 600 "$work/etc/ddns.keyring"
for z in example.test 20.127.in-addr.arpa; do
	printf '$TTL 300\n@ IN SOA ns1.example.test. hostmaster.example.test. ( 1 3600 600 86400 300 )\n@ IN NS ns1.example.test.\n' > "$work/bind/$z.db"
done
echo 'ns1 IN A 127.0.0.1' >> "$work/bind/example.test.db"
cat > "$work/bind/named.conf" <<CONF
include "$work/bind/ddns.key";
options {
	directory "$work/bind"; pid-file "$work/bind/named.pid";
	session-keyfile "$work/bind/session.key"; managed-keys-directory "$work/bind";
	listen-on port $NS { 127.0.0.1; }; listen-on-v6 { none; };
	recursion no; dnssec-validation no; notify no;
	allow-transfer { key "ddns-key"; };
};
controls { };
zone "example.test" { type primary; file "example.test.db"; update-policy { grant ddns-key zonesub ANY; }; };
zone "20.127.in-addr.arpa" { type primary; file "20.127.in-addr.arpa.db"; update-policy { grant ddns-key zonesub ANY; }; };
CONF
chown -R nobody "$work/bind"
setpriv --reuid=nobody --regid=nogroup --clear-groups named -g -c "$work/bind/named.conf" > "$work/bind/named.log" 2>&1 &
pids+=($!)
waitfor 20 dig +short -p "$NS" @127.0.0.1 SOA example.test

bold "dnsmasq on 127.0.0.1:$DM serving cloud.test from brine's files"
touch "$work/dnsmasq/addn-hosts" "$work/dnsmasq/dhcp-hosts"
chmod -R a+rX "$work/dnsmasq"
cat > "$work/dnsmasq/dnsmasq.conf" <<CONF
port=$DM
listen-address=127.0.0.1
bind-interfaces
no-resolv
no-hosts
domain=cloud.test
local=/cloud.test/
addn-hosts=$work/dnsmasq/addn-hosts
dhcp-hostsfile=$work/dnsmasq/dhcp-hosts
pid-file=$work/dnsmasq/dnsmasq.pid
log-facility=-
CONF
dnsmasq -k -C "$work/dnsmasq/dnsmasq.conf" > "$work/dnsmasq/dnsmasq.log" 2>&1 &
pids+=($!)
waitfor 10 test -s "$work/dnsmasq/dnsmasq.pid"

# The simulator hands out addresses from 127.20.0.10 on (its own three VMs
# take the first ones), all on loopback: one sshd listening on ten of them
# (it takes at most 16) plays every VM's guest.
first=10 last=19
bold "OpenSSH sshd on 127.20.0.$first-$last:$SSH playing the VMs' guests"
ssh-keygen -q -t ed25519 -N '' -C demo-host -f "$work/ssh/host_key"
ssh-keygen -q -t ed25519 -N '' -C demo-deploy -f "$work/ssh/id_ed25519"
cp "$work/ssh/id_ed25519.pub" "$work/ssh/authorized_keys"
{
	echo "Port $SSH"
	for i in $(seq $first $last); do echo "ListenAddress 127.20.0.$i"; done
	cat <<CONF
HostKey $work/ssh/host_key
PidFile $work/ssh/sshd.pid
AuthorizedKeysFile $work/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
CONF
} > "$work/ssh/sshd_config"
mkdir -p /run/sshd
/usr/sbin/sshd -D -e -f "$work/ssh/sshd_config" > "$work/ssh/sshd.log" 2>&1 &
pids+=($!)
waitfor 10 python3 -c 'import socket,sys; socket.create_connection(("127.20.0.'$first'", int(sys.argv[1])), 1)' "$SSH" ||
	{ echo "demo: sshd did not start:" >&2; cat "$work/ssh/sshd.log" >&2; exit 1; }
cat > "$work/etc/cloud.deploy.d/demo.sh" <<'SH'
#!/bin/sh
# The demo's deploy script: runs on the VM as root, leaves a marker named
# after the address it was reached at.
set -eu
addr=$(echo "$SSH_CONNECTION" | cut -d' ' -f3)
echo "deployed $addr with role $ROLE by $(id -un)" > "$MARKERS/$addr"
echo "bootstrapped $addr"
SH
cat "$work/etc/cloud.deploy.d/demo.sh"

bold "Slack: $( [ -n "${SLACK_TOKEN:-}" ] && echo "workspace channel $SLACK_CHANNEL" || echo "local capture on 127.0.0.1:$SL")"
if [ -n "${SLACK_TOKEN:-}" ] && [ -n "${SLACK_CHANNEL:-}" ]; then
	slack_conf="slack:\n  token_file: $work/etc/slack.token\n  channel: '$SLACK_CHANNEL'\n"
	printf '%s\n' "$SLACK_TOKEN" > "$work/etc/slack.token"; chmod 600 "$work/etc/slack.token"
else
	python3 "$examples/slack-capture.py" "$SL" "$work/slack.jsonl" &
	pids+=($!)
	slack_conf="slack:\n  token: xoxb-demo-not-a-real-token\n  channel: '#infra'\n  api_url: http://127.0.0.1:$SL/api/\n"
fi

bold "vCenter simulator on 127.0.0.1:$VC"
"$BRINE" cloud simulator --listen "127.0.0.1:$VC" --dhcp-start "127.20.0.$first" --json > "$work/vcsim.json" 2> "$work/vcsim.log" &
pids+=($!)
waitfor 30 test -s "$work/vcsim.json"
vc_url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$work/vcsim.json")
vc_user=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["user"])' "$work/vcsim.json")
export DEMO_VCSIM_PASSWORD=pass
printf 'vcsim:\n  driver: vmware\n  url: %s\n  user: %s\n  password: sdb://osenv/DEMO_VCSIM_PASSWORD\n  verify_ssl: False\n' "$vc_url" "$vc_user" > "$work/etc/cloud.providers"
cat > "$work/etc/cloud.profiles" <<CONF
web:
  provider: vcsim
  clonefrom: linux-template
  num_cpus: 2
  memory: 2GB
  script: demo
  script_env: {ROLE: web, MARKERS: $work/deployed}
  ssh_username: root
  ssh_port: $SSH
  private_key: $work/ssh/id_ed25519
  ssh_connect_timeout: 30
CONF
cat "$work/etc/cloud.profiles"
printf 'web:\n  - web1\n  - web2\n  - web3\n' > "$work/etc/cloud.map"

bold "Salt-format reaction files: DNS on deploy_script, removal on destroyed"
cat > "$work/reactor/add_dns.sls" <<SLS
add_dns_{{ data['name'] }}:
  runner.ddns.add_host:
    - zone: example.test
    - name: {{ data['name'] }}
    - ttl: 60
    - ip: {{ data['host'] }}
    - keyname: ddns-key
    - keyfile: $work/etc/ddns.keyring
    - nameserver: 127.0.0.1
    - port: $NS
SLS
cat > "$work/reactor/rem_dns.sls" <<SLS
rem_dns_{{ data['name'] }}:
  runner.ddns.delete_host:
    - zone: example.test
    - name: {{ data['name'] }}
    - keyname: ddns-key
    - keyfile: $work/etc/ddns.keyring
    - nameserver: 127.0.0.1
    - port: $NS
SLS
cat "$work/reactor/add_dns.sls"

cat > "$work/etc/master" <<CONF
id: demo
data_dir: $work/data
publish_port: $PUB
ret_port: $REQ
log_level: warn
reactor:
  - 'salt/cloud/*/deploy_script':
    - $work/reactor/add_dns.sls
  - 'salt/cloud/*/destroyed':
    - $work/reactor/rem_dns.sls
dnsmasq:
  hostsfile: $work/dnsmasq/dhcp-hosts
  addn_hosts: $work/dnsmasq/addn-hosts
  domain: cloud.test
  pidfile: $work/dnsmasq/dnsmasq.pid
CONF
printf "$slack_conf" >> "$work/etc/master"
export BRINE_DATA=$work/data
B=("$BRINE" -c "$work/etc")

bold "master (embedded bus)"
"${B[@]}" master 2> "$work/master.log" &
pids+=($!)
waitfor 30 "${B[@]}" event send demo/ping

start=$SECONDS
bold "brine cloud -m cloud.map -P 3: three VMs in parallel, each deployed over SSH"
"${B[@]}" cloud -m "$work/etc/cloud.map" -P 3 -y
check "3 VMs created" test "$("${B[@]}" cloud -Q --json | python3 -c 'import json,sys; print(sum(1 for n in json.load(sys.stdin) if n["name"] in ("web1","web2","web3")))')" = 3
timeout 15 "${B[@]}" event watch 'salt/cloud/*/deploy_script' --since 1h --count 3 > "$work/deploy_script.events" || true
sed 's/^/  /' "$work/deploy_script.events"

declare -A ip
for vm in web1 web2 web3; do
	ip[$vm]=$("${B[@]}" mine get "$vm" network.ip_addrs --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print((list(d.values())[0] or [""])[0])')
done

bold "DNS and DHCP follow"
for vm in web1 web2 web3; do
	a=${ip[$vm]}
	ptr=$(echo "$a" | awk -F. '{print $4"."$3"."$2"."$1".in-addr.arpa"}')
	check "$vm BIND A $a" waitfor 10 sh -c "dig +short -p $NS @127.0.0.1 $vm.example.test A | grep -qx '$a'"
	check "$vm BIND PTR" waitfor 10 sh -c "dig +short -p $NS @127.0.0.1 -x $a | grep -qx '$vm.example.test.'"
	check "$vm dnsmasq A $a" waitfor 10 sh -c "dig +short -p $DM @127.0.0.1 $vm.cloud.test A | grep -qx '$a'"
	check "$vm DHCP reservation" grep -q ",$a,$vm" "$work/dnsmasq/dhcp-hosts"
	check "$vm deployed over SSH at $a" deployed "$vm" "$a"
	printf '  %-5s %-12s BIND: %-12s PTR: %-20s dnsmasq: %s\n' "$vm" "$a" \
		"$(dig +short -p "$NS" @127.0.0.1 "$vm.example.test" A)" "$(dig +short -p "$NS" @127.0.0.1 -x "$a")" \
		"$(dig +short -p "$DM" @127.0.0.1 "$vm.cloud.test" A)"
done
echo "dhcp-hostsfile:"; sed 's/^/  /' "$work/dnsmasq/dhcp-hosts"

bold "destroying web2"
"${B[@]}" cloud -d web2 -y
check "web2 gone from BIND" waitfor 10 sh -c "[ -z \"\$(dig +short -p $NS @127.0.0.1 web2.example.test A)\" ]"
check "web2 PTR gone" waitfor 10 sh -c "[ -z \"\$(dig +short -p $NS @127.0.0.1 -x ${ip[web2]})\" ]"
check "web2 gone from dnsmasq" waitfor 10 sh -c "[ -z \"\$(dig +short -p $DM @127.0.0.1 web2.cloud.test A)\" ]"
check "web1 still in BIND" sh -c "dig +short -p $NS @127.0.0.1 web1.example.test A | grep -q ."

bold "the audit trail in Slack"
if [ -f "$work/slack.jsonl" ]; then
	check "Slack thread for web1's lifecycle" waitfor 15 sh -c "grep -q 'web1' '$work/slack.jsonl' && grep -q '\"thread_ts\": \"1' '$work/slack.jsonl'"
	python3 - "$work/slack.jsonl" <<'PY'
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1])]
for m in msgs[:40]:
    indent = "    └ " if m["thread_ts"] else "  "
    print(f'{indent}[{m["method"]}] {(m["text"] or "").splitlines()[0][:100]}')
PY
fi

bold "jobs"
"${B[@]}" jobs list --limit 8 || true

bold "summary ($((SECONDS - start)) s after the master started)"
printf '  %s\n' "${checks[@]}"
if [ "$failed" -gt 0 ]; then
	echo "demo: $failed check(s) failed; master log:" >&2
	tail -20 "$work/master.log" >&2
	exit 1
fi
echo "all ${#checks[@]} checks passed"
