#!/usr/bin/env bash
# make demo: the whole story of the five Salt write-ups brine was designed
# from, with Salt's own commands, files and payloads, on real peers.
#
#  1. salt-cloud -m creates three VMs on govmomi's vCenter simulator. Each
#     VM's guest is a network namespace that takes the address the
#     simulator handed out, on a bridge, with an OpenSSH sshd; the deploy
#     step logs in and, with brine's built-in bootstrap, uploads brine-agent
#     and installs and starts it there.
#  2. The agents' keys arrive pending; a salt/auth reaction accepts web*
#     and leaves a stray laptop's key pending (salt-key -L).
#  3. On salt/minion/<id>/start a reaction applies the highstate: a file
#     with a pillar value, a package.
#  4. BIND (A + PTR, TSIG) and dnsmasq (DHCP reservations, real DHCP on the
#     bridge) follow the addresses the agents report to the mine.
#  5. An inotify beacon and a reaction put back a file changed by hand.
#  6. salt-run state.orchestrate orch.deploy rolls a release over the web
#     servers, and stops at the smoke test of a broken one.
#  7. Slack (a local capture, or a workspace with SLACK_TOKEN and
#     SLACK_CHANNEL) threads every job.
#  8. salt-cloud -d destroys a VM: its key, DNS records and reservation go,
#     and its agent is reported gone.
#
# Everything lives in a temporary directory and in namespaces named after
# this run, and is removed at the end, also on Ctrl-C. Exits 0 only if
# every check passed. Needs root (namespaces, sshd) and the packages make
# demo installs.
set -eEuo pipefail
# A command that ends the demo early says which, and where.
trap 'echo "demo: line $LINENO: \"$BASH_COMMAND\" failed (exit $?)" >&2' ERR
BRINE=${1:-bin/brine}
BRINE=$(cd "$(dirname "$BRINE")" && pwd)/$(basename "$BRINE")
# The built-in bootstrap uploads brine-agent from beside brine (make build
# builds both), found through the profile's agent_binaries.
AGENTS=$(dirname "$BRINE")
examples=$(cd "$(dirname "$0")/../examples" && pwd)
work=$(mktemp -d -t brine-demo.XXXXXX)
chmod 755 "$work"
run=$(printf '%04x' $((RANDOM % 65536)))
P=brine-demo-$run # prefix of this run's namespaces
BR=bd$run         # its bridge
NET=10.79.0       # the bridge's subnet: the master is .1, dnsmasq .2, VMs .13 on
pids=()

cleanup() {
	# Whatever fails while tearing down, the demo's own exit status stands.
	local rc=$?
	set +e
	trap - EXIT INT TERM
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for ns in $(ip netns list 2>/dev/null | awk -v p="$P-" 'index($1, p) == 1 {print $1}'); do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	ip link del "$BR" 2>/dev/null
	wait 2>/dev/null
	if [ -n "${DEMO_KEEP:-}" ]; then echo "demo: kept $work" >&2; else rm -rf "$work"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
	c_bold=$'\033[1m' c_dim=$'\033[2m' c_cmd=$'\033[36m' c_pass=$'\033[32m' c_fail=$'\033[31m' c_off=$'\033[0m'
else
	c_bold='' c_dim='' c_cmd='' c_pass='' c_fail='' c_off=''
fi
step=0
chapter() { step=$((step + 1)); printf '\n%s== %d. %s%s\n' "$c_bold" "$step" "$*" "$c_off"; }
say() { printf '%s%s%s\n' "$c_dim" "$*" "$c_off"; }
indent() { sed 's/^/    /'; }
checks=() failed=0
check() { # check NAME COMMAND… — record whether COMMAND succeeds, and say so
	local name=$1; shift
	if "$@" >/dev/null 2>&1; then
		checks+=("${c_pass}PASS${c_off}  $name"); printf '  %s✓%s %s\n' "$c_pass" "$c_off" "$name"
	else
		checks+=("${c_fail}FAIL${c_off}  $name"); printf '  %s✗ %s%s\n' "$c_fail" "$name" "$c_off"; failed=$((failed + 1))
	fi
}
waitfor() { # waitfor SECONDS COMMAND…
	local until=$((SECONDS + $1)); shift
	until "$@" >/dev/null 2>&1; do [ $SECONDS -ge $until ] && return 1; sleep 0.2; done
}
port() { # port [TAKEN...] — a loopback port free for TCP and UDP, below the ephemeral range
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
json() { # json EXPR — evaluate a Python expression over the JSON on stdin (as d)
	python3 -c 'import json, sys; d = json.load(sys.stdin); r = eval(sys.argv[1]); print(r if isinstance(r, str) else json.dumps(r))' "$1"
}

for cmd in named dnsmasq dig tsig-keygen setpriv python3 /usr/sbin/sshd ssh ssh-keygen ip busybox; do
	command -v "$cmd" >/dev/null || { echo "demo: $cmd is missing (make demo installs bind9, bind9-dnsutils, dnsmasq-base, openssh-server, openssh-client, iproute2, busybox)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "demo: run as root (network namespaces, sshd)" >&2; exit 1; }
[ -x "$AGENTS/brine-agent" ] || { echo "demo: $AGENTS/brine-agent is missing: the VMs' agent (make build builds it)" >&2; exit 1; }
busybox udhcpc --help >/dev/null 2>&1 || { echo "demo: busybox has no udhcpc (install busybox and udhcpc)" >&2; exit 1; }
if [ -n "$(ip -o addr show to "$NET.0/24")" ]; then
	echo "demo: $NET.0/24 is already in use on this host (another demo running, or left over):" >&2
	ip -o addr show to "$NET.0/24" >&2
	exit 1
fi

# Salt's commands are brine under Salt's names; each gets this demo's
# configuration directory, as -c /etc/salt would.
mkdir -p "$work"/{bin,etc,bind,dnsmasq,data,ssh,guests,srv/salt/orch,srv/salt/reactor,srv/pillar}
"$BRINE" install-aliases "$work/bin" >/dev/null
for c in salt salt-key salt-run salt-cloud salt-call; do
	eval "$c() { \"$work/bin/$c\" -c \"$work/etc\" \"\$@\"; }"
done
brine() { "$BRINE" -c "$work/etc" "$@"; }
show() { # show COMMAND… — print the command line a person would type, then run it
	printf '%s$ %s%s\n' "$c_cmd" "$*" "$c_off"
	"$@" 2>&1 | indent
	return "${PIPESTATUS[0]}"
}

PUB=$(port); REQ=$(port "$PUB"); VC=$(port "$PUB" "$REQ"); NS=$(port "$PUB" "$REQ" "$VC"); SL=$(port "$PUB" "$REQ" "$VC" "$NS")
start=$SECONDS

chapter "The site: a network, BIND, dnsmasq, Slack and a vCenter"
say "A bridge $BR ($NET.0/24) is the site's LAN: the master listens on $NET.1, dnsmasq"
say "serves DHCP and DNS from its own namespace at $NET.2, VMs come up at $NET.13 on."
ip link add "$BR" type bridge
ip addr add "$NET.1/24" dev "$BR"
ip link set "$BR" up
# netns NAME IP [MAC] — a namespace on the bridge holding IP on its eth0.
netns() {
	local ns=$P-$1 i=${2##*.}
	ip netns add "$ns"
	ip link add "v$run$i" type veth peer name "g$run$i"
	ip link set "g$run$i" netns "$ns"
	ip -n "$ns" link set "g$run$i" name eth0
	[ -n "${3:-}" ] && ip -n "$ns" link set eth0 address "$3"
	ip -n "$ns" addr add "$2/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
	ip link set "v$run$i" master "$BR"
	ip link set "v$run$i" up
}

tsig-keygen -a hmac-sha256 ddns-key > "$work/bind/ddns.key"
secret=$(sed -n 's/.*secret "\(.*\)";/\1/p' "$work/bind/ddns.key")
printf '{"ddns-key.": "%s"}\n' "$secret" > "$work/etc/ddns.keyring"
chmod 600 "$work/etc/ddns.keyring"
for z in example.test 0.79.10.in-addr.arpa; do
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
zone "0.79.10.in-addr.arpa" { type primary; file "0.79.10.in-addr.arpa.db"; update-policy { grant ddns-key zonesub ANY; }; };
CONF
chown -R nobody "$work/bind"
setpriv --reuid=nobody --regid=nogroup --clear-groups named -g -c "$work/bind/named.conf" > "$work/bind/named.log" 2>&1 &
pids+=($!)
waitfor 20 dig +short -p "$NS" @127.0.0.1 SOA example.test || { echo "demo: BIND did not start:" >&2; cat "$work/bind/named.log" >&2; exit 1; }
echo "  BIND 9 on 127.0.0.1:$NS: zones example.test and 0.79.10.in-addr.arpa, updates signed with TSIG key ddns-key"

netns dhcp "$NET.2"
touch "$work/dnsmasq/addn-hosts" "$work/dnsmasq/dhcp-hosts"
chmod -R a+rX "$work/dnsmasq"
ip netns exec "$P-dhcp" dnsmasq -k --conf-file=/dev/null --interface=eth0 --bind-interfaces --except-interface=lo \
	--no-resolv --no-hosts --domain=example.test --local=/example.test/ \
	--addn-hosts="$work/dnsmasq/addn-hosts" --dhcp-hostsfile="$work/dnsmasq/dhcp-hosts" \
	--dhcp-range="$NET.0,static,255.255.255.0,1h" --dhcp-leasefile="$work/dnsmasq/leases" --dhcp-authoritative \
	--log-dhcp --log-facility=- --pid-file="$work/dnsmasq/dnsmasq.pid" > "$work/dnsmasq/dnsmasq.log" 2>&1 &
pids+=($!)
waitfor 10 test -s "$work/dnsmasq/dnsmasq.pid" || { echo "demo: dnsmasq did not start:" >&2; cat "$work/dnsmasq/dnsmasq.log" >&2; exit 1; }
echo "  dnsmasq on $NET.2: DHCP for reserved machines only, names from brine's files"

if [ -n "${SLACK_TOKEN:-}" ] && [ -n "${SLACK_CHANNEL:-}" ]; then
	printf '%s\n' "$SLACK_TOKEN" > "$work/etc/slack.token"; chmod 600 "$work/etc/slack.token"
	slack_conf="slack:\n  token_file: $work/etc/slack.token\n  channel: '$SLACK_CHANNEL'\n"
	echo "  Slack: workspace channel $SLACK_CHANNEL"
else
	python3 "$examples/slack-capture.py" "$SL" "$work/slack.jsonl" &
	pids+=($!)
	# The capture is not Slack: no need to keep to Slack's one message a second.
	slack_conf="slack:\n  token: xoxb-demo-not-a-real-token\n  channel: '#infra'\n  api_url: http://127.0.0.1:$SL/api/\n  rate: 0\n"
	echo "  Slack: a local capture of Slack's Web API on 127.0.0.1:$SL (SLACK_TOKEN and SLACK_CHANNEL post to a workspace)"
fi

# A VM's guest (below) stops as the simulator powers the VM off, and the
# power-off waits for it, as a real VM's guest stops with it: salt-cloud -d
# deletes the key after the power-off, and a guest still running would
# reconnect its agent, whose key would come back pending.
cat > "$work/bin/power-off" <<SH
#!/bin/sh
ns="$P-\$1"
pids=\$(ip netns pids "\$ns" 2>/dev/null) || exit 0 # no guest booted
[ -z "\$pids" ] || kill -9 \$pids
for i in \$(seq 100); do [ -z "\$(ip netns pids "\$ns")" ] && break; sleep 0.05; done
echo "\$(date +%T.%N) powered off \$1"
SH
chmod 755 "$work/bin/power-off"
"$BRINE" cloud simulator --listen "127.0.0.1:$VC" --dhcp-start "$NET.10" --on-power-off "$work/bin/power-off" --json \
	> "$work/vcsim.json" 2>> "$work/guests.log" &
pids+=($!)
waitfor 30 test -s "$work/vcsim.json"
vc_url=$(json 'd["url"]' < "$work/vcsim.json")
vc_user=$(json 'd["user"]' < "$work/vcsim.json")
echo "  vCenter simulator on 127.0.0.1:$VC: VMs get addresses from $NET.10 (its own three take .10-.12)"

chapter "The master: Salt's files, unchanged"
export DEMO_VCSIM_PASSWORD=pass
printf 'vcsim:\n  driver: vmware\n  url: %s\n  user: %s\n  password: sdb://osenv/DEMO_VCSIM_PASSWORD\n  verify_ssl: False\n' "$vc_url" "$vc_user" > "$work/etc/cloud.providers"
ssh-keygen -q -t ed25519 -N '' -C demo-deploy -f "$work/ssh/id_ed25519"
cp "$work/ssh/id_ed25519.pub" "$work/ssh/authorized_keys"
cat > "$work/etc/cloud.profiles" <<CONF
web:
  provider: vcsim
  clonefrom: linux-template
  num_cpus: 1
  memory: 1GB
  agent_binaries: $AGENTS
  ssh_username: root
  private_key: $work/ssh/id_ed25519
  ssh_connect_timeout: 60
  grains: {role: web}
  minion:
    master: $NET.1
    master_port: $REQ
    beacons:
      inotify:
        - files:
            /srv/www/index.html:
              mask: [modify]
        - disable_during_state_run: True
CONF
printf 'web:\n  - web1\n  - web2\n  - web3\n' > "$work/etc/cloud.map"

cat > "$work/srv/salt/reactor/auth.sls" <<'SLS'
{# seed 001: accept the keys of the web servers; anything else waits for a person #}
{% if data['act'] == 'pend' and data['id'].startswith('web') %}
minion_add:
  wheel.key.accept:
    - match: {{ data['id'] }}
{% endif %}
SLS
cat > "$work/srv/salt/reactor/highstate.sls" <<'SLS'
{# seeds 001 and 003: a machine that starts gets its highstate #}
highstate_run:
  local.state.highstate:
    - tgt: {{ data['id'] }}
SLS
cat > "$work/srv/salt/reactor/restore.sls" <<'SLS'
{# the beacon saw the page change: apply its state again #}
restore_{{ data['id'] }}:
  local.state.apply:
    - tgt: {{ data['id'] }}
    - arg:
      - www
    - kwarg:
        queue: True
SLS
cat > "$work/srv/salt/top.sls" <<'SLS'
base:
  'web*':
    - www
SLS
cat > "$work/srv/salt/www.sls" <<'SLS'
/srv/www/index.html:
  file.managed:
    - makedirs: True
    - contents: |
        <h1>{{ pillar['site']['greeting'] }}</h1>
        <p>served by {{ grains['id'] }} ({{ grains['role'] }})</p>

openssh-server:
  pkg.installed: []
SLS
cat > "$work/srv/salt/app.sls" <<'SLS'
{% set version = pillar.get('version', '1.0') %}
/srv/app/VERSION:
  file.managed:
    - makedirs: True
    - contents: "{{ version }}"

/srv/app/selftest:
  file.managed:
    - mode: '0755'
    - contents: |
        #!/bin/sh
        {%- if pillar.get('broken') %}
        echo "release {{ version }}: GET /health answered 500" >&2
        exit 1
        {%- else %}
        echo "release {{ version }}: healthy"
        {%- endif %}
    - require:
      - file: /srv/app/VERSION
SLS
cat > "$work/srv/salt/orch/deploy.sls" <<'SLS'
{# seed 001: a rolling deploy, one web server at a time, each smoke-tested
   before the next is touched #}
{% set hosts = salt['mine.get']('web*', 'network.ip_addrs') | sort %}
{% for host in hosts %}
deploy_{{ host }}:
  salt.state:
    - tgt: {{ host }}
    - sls:
      - app
    - pillar:
        version: "{{ pillar.get('version', '1.0') }}"
        broken: {{ pillar.get('broken', False) }}
{%- if not loop.first %}
    - require:
      - salt: smoke_{{ hosts[loop.index0 - 1] }}
{%- endif %}

smoke_{{ host }}:
  salt.function:
    - name: cmd.run
    - tgt: {{ host }}
    - arg:
      - /srv/app/selftest
    - require:
      - salt: deploy_{{ host }}
{% endfor %}
SLS
cat > "$work/srv/pillar/top.sls" <<'SLS'
base:
  'web*':
    - site
SLS
cat > "$work/srv/pillar/site.sls" <<'SLS'
site:
  greeting: Hello from the brine demo
SLS

cat > "$work/etc/master" <<CONF
id: demo
interface: $NET.1
publish_port: $PUB
ret_port: $REQ
data_dir: $work/data
log_level: warn
presence_events: True
loop_interval: 2
file_roots:
  base: [$work/srv/salt]
pillar_roots:
  base: [$work/srv/pillar]
reactor:
  - 'salt/auth':
    - salt://reactor/auth.sls
  - 'salt/minion/*/start':
    - salt://reactor/highstate.sls
  - 'salt/beacon/*/inotify//srv/www/index.html':
    - salt://reactor/restore.sls
ddns:
  nameserver: 127.0.0.1
  port: $NS
  keyfile: $work/etc/ddns.keyring
  keyname: ddns-key
  ttl: 60
  zones:
    example.test: {}
    0.79.10.in-addr.arpa: {}
  sync:
    zone: example.test
    targets: 'web*'
dnsmasq:
  hostsfile: $work/dnsmasq/dhcp-hosts
  addn_hosts: $work/dnsmasq/addn-hosts
  domain: example.test
  pidfile: $work/dnsmasq/dnsmasq.pid
CONF
printf "$slack_conf" >> "$work/etc/master"
sed -n '/^reactor:/,/^dnsmasq:/p' "$work/etc/master" | sed '$d' | indent
say "  (and file_roots, pillar_roots, dnsmasq and slack: ${work}/etc/master)"
export BRINE_DATA=$work/data
# Background processes run the binary itself, not through a shell function,
# so that the pid cleanup kills is theirs.
"$BRINE" -c "$work/etc" master 2> "$work/master.log" &
pids+=($!)
waitfor 30 brine event send demo/ping || { echo "demo: the master did not start:" >&2; cat "$work/master.log" >&2; exit 1; }
"$BRINE" -c "$work/etc" event watch '*' --since 1h > "$work/events.log" 2>/dev/null &
pids+=($!)
echo "  master on $NET.1:$REQ (embedded NATS JetStream under $work/data)"

# The VMs' guests. The simulator gives a VM its address; salt-cloud then
# waits for SSH there (salt/cloud/<vm>/waiting_for_ssh). This watcher plays
# the VM booting: a namespace with that address and the VM's MAC, a mount
# namespace in which /etc, /usr, /var and /run are its own (copy-on-write
# overlays of the host's, so what the bootstrap installs stays in the VM),
# with its own /srv and resolv.conf and no systemd, and an sshd. The
# simulator stops it when the VM powers off (power-off, above).
boot_guest() { # boot_guest NAME IP
	local name=$1 ip=$2 g=$work/guests/$1 mac
	echo "$(date +%T.%N) booting $name"
	mac=$(salt-cloud -Q --json | json "[m for n in d if n['name'] == '$name' for m in n.get('macs') or []][0]")
	netns "$name" "$ip" "$mac"
	mkdir -p "$g/srv"
	ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$g/host_key"
	printf 'ListenAddress %s\nPort 22\nHostKey %s\nPidFile %s\nAuthorizedKeysFile %s\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n' \
		"$ip" "$g/host_key" "$g/sshd.pid" "$work/ssh/authorized_keys" > "$g/sshd_config"
	mkdir -p /run/sshd
	printf 'nameserver %s\nsearch example.test\n' "$NET.2" > "$g/resolv.conf" # the site's DNS, as DHCP would say
	ip netns exec "$P-$name" sh -c 'set -e
		for d in etc usr var run; do
			mkdir -p "$1/$d-up" "$1/$d-work"
			mount -t overlay overlay -o "lowerdir=/$d,upperdir=$1/$d-up,workdir=$1/$d-work" "/$d"
		done
		if [ -d /run/systemd ]; then mount -t tmpfs tmpfs /run/systemd; fi
		mount --bind "$1/srv" /srv && mount --bind "$1/resolv.conf" /etc/resolv.conf
		exec /usr/sbin/sshd -D -e -f "$1/sshd_config"' sh "$g" > "$g/sshd.log" 2>&1 &
	echo "$(date +%T.%N) booted $name at $ip ($mac)"
}
mkfifo "$work/cloud.fifo"
"$BRINE" -c "$work/etc" event watch 'salt/cloud/*' --since 1h > "$work/cloud.fifo" 2>/dev/null &
pids+=($!)
while IFS=$'\t' read -r tag data; do
	name=${tag#salt/cloud/}; name=${name%%/*}
	case $tag in
	*/waiting_for_ssh) boot_guest "$name" "$(json 'd["ip_address"]' <<< "$data")" & ;;
	esac
done < "$work/cloud.fifo" >> "$work/guests.log" 2>&1 &
pids+=($!)

chapter "salt-cloud -m: three VMs, each deployed with an agent"
say "salt-cloud creates web1-web3 in parallel; on each, the deploy step logs in over SSH"
say "and the built-in bootstrap (no script: in the profile) uploads brine-agent, installs it"
say "with the agent's configuration salt-cloud would write, and starts it."
show salt-cloud -m "$work/etc/cloud.map" -P -y || true
salt-cloud -Q --json > "$work/vms.json"
check "3 VMs created" test "$(json 'sum(1 for n in d if n["name"] in ("web1", "web2", "web3"))' < "$work/vms.json")" = 3
declare -A ip mac
for vm in web1 web2 web3; do
	ip[$vm]=$(json "[n['private_ips'][0] for n in d if n['name'] == '$vm'][0]" < "$work/vms.json")
	mac[$vm]=$(json "[n['macs'][0] for n in d if n['name'] == '$vm'][0]" < "$work/vms.json")
	check "$vm deployed over SSH at ${ip[$vm]}, its agent running in the guest" \
		sh -c "grep -q 'salt/cloud/$vm/deploy_script' '$work/events.log' && ip netns pids '$P-$vm' | xargs -r ps -o args= -p | grep -q '^/usr/bin/brine-agent -c /etc/brine'"
done

chapter "Keys: a reaction accepts web*, a stray machine waits"
say "Meanwhile someone points a laptop at the master. Its agent's key arrives pending"
say "like the others, but the salt/auth reaction (seed 001) only accepts web*."
netns laptop "$NET.50"
mkdir -p "$work/guests/laptop/usr-local/etc/brine"
printf 'id: laptop-dave\nmaster: %s\nmaster_port: %s\ncachedir: /usr/local/var/cache/brine\n' "$NET.1" "$REQ" > "$work/guests/laptop/usr-local/etc/brine/minion"
ip netns exec "$P-laptop" sh -c 'mount --bind "$1" /usr/local && exec "$2" agent -c /usr/local/etc/brine' sh "$work/guests/laptop/usr-local" "$BRINE" \
	> "$work/guests/laptop/agent.log" 2>&1 &
pids+=($!)
keys_are() { # keys_are LIST IDS… — salt-key lists exactly IDS under LIST
	local list=$1; shift
	[ "$(salt-key -L --json | json "' '.join(sorted(d.get('$list', [])))")" = "$*" ]
}
accepted() { [ "$(grep -cP '^salt/key\t.*"act": "accept".*"id": "web[123]"' "$work/events.log")" -ge 3 ]; }
waitfor 60 accepted || true
waitfor 30 grep -qP '^salt/auth\t.*"act": "pend".*"id": "laptop-dave"' "$work/events.log" || true
show salt-key -L
check "web1, web2, web3 accepted by the salt/auth reaction" keys_are minions web1 web2 web3
check "laptop-dave left pending" keys_are minions_pre laptop-dave
grep -m1 -P '^salt/auth\t.*"act": "pend".*"id": "laptop-dave"' "$work/events.log" | cut -c1-100 | sed 's/$/…/' | indent || true

chapter "salt/minion/<id>/start: each web server applies its highstate"
say "top.sls gives web* the www formula: a page with a pillar value, and a package."
jobs_done() { # jobs_done any|all FUN TGT — any or all of the FUN jobs on TGT (one at least) ended, every return a success
	brine jobs list --fun "$2" --json | json "(lambda js: bool(js) and $1(j.get('end_time') and j.get('returns') and all(r['success'] for r in j['returns'].values()) for j in js))([j for j in d if j['tgt'] == '$3'])" | grep -x true >/dev/null
}
for vm in web1 web2 web3; do waitfor 60 jobs_done any state.highstate "$vm" || true; done
jid=$(brine jobs list --fun state.highstate --json | json "[j['jid'] for j in d if j['tgt'] == 'web1'][0]" 2>/dev/null || true)
[ -n "$jid" ] && show salt-run jobs.lookup_jid "$jid" | head -60 || true
for vm in web1 web2 web3; do
	check "$vm highstate succeeded" jobs_done any state.highstate "$vm"
done
show salt 'web*' cmd.run 'cat /srv/www/index.html' || true
for vm in web1 web2 web3; do
	check "$vm serves the pillar's greeting" grep -q "Hello from the brine demo" "$work/guests/$vm/srv/www/index.html"
done

chapter "DNS and DHCP follow the addresses the agents report to the mine"
show salt-run mine.get 'web*' network.ip_addrs || true
reported() { # reported VM ADDRESS — the VM's mine record has ADDRESS and the grains only its agent sends
	brine mine list --json | json "any(h['id'] == '$1' and '$2' in h['ips'] and h['grains'].get('kernel') == 'Linux' for h in d)" | grep -x true >/dev/null
}
for vm in web1 web2 web3; do
	a=${ip[$vm]}
	check "$vm in the mine at $a, reported by its agent" reported "$vm" "$a"
	check "$vm BIND A $a" waitfor 15 sh -c "dig +short -p $NS @127.0.0.1 $vm.example.test A | grep -qx '$a'"
	check "$vm BIND PTR" waitfor 15 sh -c "dig +short -p $NS @127.0.0.1 -x $a | grep -qx '$vm.example.test.'"
	check "$vm DHCP reservation ${mac[$vm]} $a" waitfor 15 grep -q "^${mac[$vm]},$a,$vm" "$work/dnsmasq/dhcp-hosts"
	check "$vm dnsmasq answers $a" waitfor 15 sh -c "dig +short @$NET.2 $vm.example.test A | grep -qx '$a'"
done
printf '#!/bin/sh\n[ "$1" = bound ] && echo "lease $ip for $hostname"\nexit 0\n' > "$work/udhcpc.sh"; chmod 755 "$work/udhcpc.sh"
dhcp() { ip netns exec "$P-$1" busybox udhcpc -i eth0 -f -q -n -R -t 3 -T 1 -s "$work/udhcpc.sh" 2>&1; }
no_lease() { # no_lease NS — a DHCP client ran there and was offered nothing
	local out; out=$(dhcp "$1") && return 1
	grep -q 'broadcasting discover' <<< "$out" && ! grep -q '^lease' <<< "$out"
}
for vm in web1 web2 web3; do
	printf '%s$ ip netns exec %s udhcpc -i eth0%s   %s(DHCP from inside %s)%s\n' "$c_cmd" "$vm" "$c_off" "$c_dim" "$vm" "$c_off"
	dhcp "$vm" > "$work/dhcp-$vm.out" || true
	indent < "$work/dhcp-$vm.out"
	check "$vm gets its reserved address by DHCP" grep -qx "lease ${ip[$vm]} for $vm" "$work/dhcp-$vm.out"
done
check "laptop-dave (pending, not in the mine) gets no lease" no_lease laptop
echo "  dhcp-hostsfile:"; indent < "$work/dnsmasq/dhcp-hosts"

chapter "A beacon: a file changed by hand is put back"
say "Someone logs in to web1 and edits the page; the agent's inotify beacon fires"
say "salt/beacon/web1/inotify//srv/www/index.html and a reaction re-applies www."
show ssh -i "$work/ssh/id_ed25519" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
	"root@${ip[web1]}" "echo '<h1>defaced</h1>' > /srv/www/index.html" || true
check "web1's beacon fired" waitfor 20 grep -q '^salt/beacon/web1/inotify//srv/www/index.html' "$work/events.log"
# Restored once the reaction's state runs have ended (an edit can fire the
# beacon twice), not when the first state has rewritten the page: an agent
# runs one state run at a time, and the orchestration below would be
# refused while one finishes.
restored() { jobs_done all state.apply web1 && grep -q "Hello from the brine demo" "$work/guests/web1/srv/www/index.html"; }
check "web1's page restored" waitfor 30 restored
indent < "$work/guests/web1/srv/www/index.html"

chapter "salt-run state.orchestrate orch.deploy: a rolling deploy"
say "Release 2.0 goes to web1, web2, web3 in turn, each smoke-tested before the next."
rc=0; show salt-run state.orchestrate orch.deploy pillar='{"version": "2.0"}' --state-output terse_id || rc=$?
check "release 2.0 rolled out (exit 0)" test "$rc" = 0
for vm in web1 web2 web3; do
	check "$vm runs 2.0" grep -qx 2.0 "$work/guests/$vm/srv/app/VERSION"
done
say "Release 2.1 is broken: web1's smoke test fails, and the rollout stops there."
rc=0; show salt-run state.orchestrate orch.deploy pillar='{"version": "2.1", "broken": true}' --state-output terse_id || rc=$?
check "release 2.1 stopped at web1's smoke test (exit 1)" test "$rc" = 1
check "web2 and web3 still run 2.0" sh -c "grep -qx 2.0 '$work/guests/web2/srv/app/VERSION' && grep -qx 2.0 '$work/guests/web3/srv/app/VERSION'"

chapter "Slack: every job in its own thread"
if [ -f "$work/slack.jsonl" ]; then
	cat > "$work/slack-check.py" <<'PY'
"""Print the Slack capture as threads; with a job list (brine jobs list
--json) as argument, check that every job has its message and, in its
thread, a reply for each agent's return (targeted jobs) or its result."""
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
posts = [m for m in msgs if m["method"] == "chat.postMessage"]
def first_line(m):
    return ((m["text"] or "").splitlines() or [""])[0]
if len(sys.argv) < 3:
    parents = [m for m in posts if not m["thread_ts"]]
    for p in parents[-12:]:
        print("    " + first_line(p)[:110])
        for r in [m for m in posts if m["thread_ts"] == p["ts"]][:6]:
            print("      └ " + first_line(r)[:104])
    sys.exit(0)
missing = []
for j in json.loads(sys.argv[2]):
    parent = next((m for m in posts if not m["thread_ts"] and j["jid"] in (m["text"] or "")), None)
    if parent is None:
        missing.append(f'{j["jid"]} {j["fun"]}: no message')
        continue
    replies = sum(1 for m in posts if m["thread_ts"] == parent["ts"])
    need = len(j.get("returns") or {}) if j["kind"] == "job" else 1
    if replies < need:
        missing.append(f'{j["jid"]} {j["fun"]}: {replies} of {need} replies')
print("\n".join(missing))
sys.exit(1 if missing else 0)
PY
	slack_threaded() { python3 "$work/slack-check.py" "$work/slack.jsonl" "$(brine jobs list --limit 500 --json)"; }
	check "every job threaded in Slack with its results" waitfor 20 slack_threaded
	say "The last threads (each job's command line, then each agent's result):"
	python3 "$work/slack-check.py" "$work/slack.jsonl"
	slack_threaded | indent || true
else
	echo "  posted to $SLACK_CHANNEL"
fi

chapter "salt-cloud -d web2: the VM, its key, its names and its lease go"
show salt-cloud -d web2 -y || true
check "web2's key deleted" waitfor 15 grep -qP '^salt/key\t.*"act": "delete".*"id": "web2"' "$work/events.log"
check "web2 gone from BIND (A)" waitfor 15 sh -c "[ -z \"\$(dig +short -p $NS @127.0.0.1 web2.example.test A)\" ]"
check "web2 gone from BIND (PTR)" waitfor 15 sh -c "[ -z \"\$(dig +short -p $NS @127.0.0.1 -x ${ip[web2]})\" ]"
check "web2's reservation gone" waitfor 15 sh -c "! grep -q ',web2' '$work/dnsmasq/dhcp-hosts'"
check "web2's agent reported gone (salt/presence/change)" waitfor 15 grep -qP '^salt/presence/change\t.*"lost": \[[^]]*"web2"' "$work/events.log"
check "web1 and web3 still in BIND" sh -c "dig +short -p $NS @127.0.0.1 web1.example.test A | grep -q . && dig +short -p $NS @127.0.0.1 web3.example.test A | grep -q ."
show salt-key -L
# (grep reads to the end: under pipefail, grep -q quitting early could kill
# salt-key with SIGPIPE and the ! turn that into "unlisted".)
unlisted() { ! salt-key -L --json | grep "\"$1\"" >/dev/null; }
check "salt-key -L lists web2 no more" unlisted web2
show salt-run manage.status

chapter "The jobs"
brine jobs list --limit 30 | indent

printf '\n%s== summary: %d s%s\n' "$c_bold" $((SECONDS - start)) "$c_off"
printf '  %s\n' "${checks[@]}"
if [ "$failed" -gt 0 ]; then
	echo "demo: $failed check(s) failed; the master's log ends with:" >&2
	tail -30 "$work/master.log" >&2
	echo "guests:" >&2; cat "$work/guests.log" >&2
	for vm in web1 web2 web3; do
		[ -f "$work/guests/$vm/var-up/log/brine-agent.log" ] || continue
		echo "$vm's agent log ends with:" >&2; tail -5 "$work/guests/$vm/var-up/log/brine-agent.log" >&2
	done
	exit 1
fi
echo "all ${#checks[@]} checks passed"
