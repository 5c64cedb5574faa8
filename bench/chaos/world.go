package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/integrations/ddns/named"
	"github.com/brinehq/brine/internal/loopback"
)

// The zones BIND serves and the masters keep in line with the mine; the
// simulator hands VMs addresses on the suite's own bridge, above the
// masters' (data only: the VMs are not deployed, nothing connects to them;
// the DDNS sync leaves loopback addresses out, so they cannot be 127.x).
const (
	zone        = "chaos.test"
	reverseZone = "0.78.10.in-addr.arpa"
	vmFirstIP   = subnet + ".100"
	ackWait     = 30 * time.Second // the reactor's durable consumer's
	leaseTTL    = 10 * time.Second // a master's lease (docs/operations.md)
)

// world is everything the suite runs: BIND, the Slack capture, the vCenter
// simulator, three masters with a dnsmasq each, and the agents.
type world struct {
	cfg     config
	dir     string
	bind    *named.Server
	slack   *slackCapture
	sim     *proc
	masters []*master
	agents  []*agent
	// lastLog is the event log the last check read, written to the
	// working directory when the run fails.
	lastLog []*bus.Event
}

type master struct {
	i       int
	id      string
	confDir string
	proc    *proc
	dnsmasq *proc
	dmDir   string
}

type agent struct {
	id       string
	dir      string
	failover bool
	proc     *proc
}

func (w *world) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s chaos: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// build starts the peers, writes every configuration and starts the
// masters and agents, returning once every agent answers.
func (w *world) build(ctx context.Context) error {
	for _, bin := range []string{"named", "dnsmasq", "ip", "setpriv"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s is missing: the chaos suite needs the Debian packages bind9, dnsmasq-base and iproute2 (make deps)", bin)
		}
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("the chaos suite needs root (network namespaces, BIND as nobody)")
	}
	if err := netUp(3); err != nil {
		return err
	}
	if err := os.Chmod(w.dir, 0o755); err != nil {
		return err
	}
	var err error
	w.bind, err = named.Start(ctx, named.Config{Zones: []string{zone, reverseZone}, Keys: []named.Key{{Name: "ddns-key"}},
		Address: hubAddr, Parent: w.dir})
	if err != nil {
		return err
	}
	keyring := filepath.Join(w.dir, "ddns.keyring")
	if err := os.WriteFile(keyring, fmt.Appendf(nil, `{"ddns-key.": %q}`, w.bind.Key("ddns-key").Secret), 0o600); err != nil {
		return err
	}
	port, err := loopback.Port()
	if err != nil {
		return err
	}
	if w.slack, err = startSlack(fmt.Sprintf("%s:%d", hubAddr, port)); err != nil {
		return err
	}
	url, user, template, err := w.simulator()
	if err != nil {
		return err
	}
	if err := w.writeFiles(); err != nil {
		return err
	}
	if err := w.writeMasters(keyring, url, user, template); err != nil {
		return err
	}
	for _, m := range w.masters {
		if err := m.dnsmasq.start(); err != nil {
			return err
		}
		if err := m.proc.start(); err != nil {
			return err
		}
	}
	for _, m := range w.masters {
		if err := w.waitMaster(ctx, m, 90*time.Second); err != nil {
			return err
		}
	}
	w.logf("three masters up as one R3 cluster on %s.11-13", subnet)
	if err := w.writeAgents(); err != nil {
		return err
	}
	for _, a := range w.agents {
		if err := a.proc.start(); err != nil {
			return err
		}
	}
	return masterproc.Poll(ctx, 90*time.Second, 500*time.Millisecond, func() bool {
		rets, _ := w.ping(ctx, w.masters[0], "15")
		return len(rets) == len(w.agents)
	})
}

// simulator starts `brine cloud simulator` on loopback (only the CLI
// talks to it) and returns its URL, user and template.
func (w *world) simulator() (url, user, template string, err error) {
	port, err := loopback.Port()
	if err != nil {
		return "", "", "", err
	}
	out := filepath.Join(w.dir, "vcsim.json")
	w.sim = newProc("simulator", filepath.Join(w.dir, "vcsim.log"), "sh", "-c",
		fmt.Sprintf("exec %s cloud simulator --listen 127.0.0.1:%d --dhcp-start %s --json > %s", w.cfg.brine, port, vmFirstIP, out))
	if err := w.sim.start(); err != nil {
		return "", "", "", err
	}
	var v struct{ URL, User, Template string }
	err = masterproc.Poll(context.Background(), 60*time.Second, 100*time.Millisecond, func() bool {
		b, _ := os.ReadFile(out)
		return json.Unmarshal(b, &v) == nil && v.URL != ""
	})
	if err != nil {
		return "", "", "", fmt.Errorf("the vCenter simulator did not start: %s", masterproc.Tail(w.sim.logPath, 10))
	}
	return v.URL, v.User, v.Template, nil
}

// writeFiles writes the file roots shared by the masters: the reaction
// and the orchestration.
func (w *world) writeFiles() error {
	files := map[string]string{
		// Each matched event's reaction is a runner job long enough to be
		// in flight when its master dies.
		"srv/reactor/react.sls": `react_{{ data['n'] }}:
  runner.test.sleep:
    - s_time: 2
`,
		"srv/orch/chaos.sls": `ping:
  salt.function:
    - name: test.ping
    - tgt: '*'
pause:
  salt.function:
    - name: test.sleep
    - tgt: 'a01'
    - arg: [2]
    - require:
      - salt: ping
report:
  salt.runner:
    - name: test.arg
    - arg: [orchestrated]
    - require:
      - salt: pause
`,
	}
	for name, body := range files {
		p := filepath.Join(w.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) writeMasters(keyring, url, user, template string) error {
	var routes []string
	for i := 1; i <= 3; i++ {
		routes = append(routes, masterAddr(i)+":6222")
	}
	bindHost, bindPort, _ := strings.Cut(w.bind.Addr, ":")
	var key []byte
	for i := 1; i <= 3; i++ {
		m := &master{i: i, id: fmt.Sprintf("m%d", i), confDir: filepath.Join(w.dir, fmt.Sprintf("m%d", i))}
		data := filepath.Join(m.confDir, "data")
		m.dmDir = filepath.Join(m.confDir, "dnsmasq")
		for _, d := range []string{data, m.dmDir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		// One master key for the cluster: agents pin it.
		if i == 1 {
			if _, err := gateway.EnsureKey(filepath.Join(data, "master.key")); err != nil {
				return err
			}
			var err error
			if key, err = os.ReadFile(filepath.Join(data, "master.key")); err != nil {
				return err
			}
		} else if err := os.WriteFile(filepath.Join(data, "master.key"), key, 0o600); err != nil {
			return err
		}
		conf := fmt.Sprintf(`id: %[1]s
data_dir: %[2]s
interface: %[3]s
publish_port: 4505
ret_port: 4506
auto_accept: true
log_level: info
file_roots:
  base: [%[4]s/srv]
bus:
  cluster:
    name: chaos
    listen: %[3]s:6222
    routes: [%[5]s]
reactor:
  - 'chaos/react/*':
    - salt://reactor/react.sls
ddns:
  nameserver: %[6]s
  port: %[7]s
  keyfile: %[8]s
  keyname: ddns-key
  ttl: 60
  ownership: true
  owner: chaos
  zones:
    %[9]s: {}
    %[10]s: {}
  sync: {zone: %[9]s, targets: 'vm*'}
dnsmasq:
  hostsfile: %[11]s/dhcp-hosts
  addn_hosts: %[11]s/addn-hosts
  domain: %[9]s
  pidfile: %[11]s/dnsmasq.pid
  targets: 'vm*'
slack:
  token: xoxb-chaos-capture
  channel: '#chaos'
  rate: 0
  api_url: http://%[12]s/api/
`, m.id, data, masterAddr(i), w.dir, strings.Join(routes, ", "), bindHost, bindPort, keyring, zone, reverseZone, m.dmDir, w.slack.addr)
		cloud := map[string]string{
			"master":          conf,
			"cloud.providers": fmt.Sprintf("vcsim:\n  driver: vmware\n  url: %s\n  user: %s\n  password: pass\n  verify_ssl: False\n", url, user),
			"cloud.profiles":  fmt.Sprintf("chaos:\n  provider: vcsim\n  clonefrom: %s\n  num_cpus: 1\n  memory: 1GB\n  deploy: False\n", template),
		}
		for name, body := range cloud {
			if err := os.WriteFile(filepath.Join(m.confDir, name), []byte(body), 0o600); err != nil {
				return err
			}
		}
		for _, f := range []string{"dhcp-hosts", "addn-hosts"} {
			if err := os.WriteFile(filepath.Join(m.dmDir, f), nil, 0o644); err != nil {
				return err
			}
		}
		dm := fmt.Sprintf("port=5353\nlisten-address=%s\nbind-interfaces\nno-resolv\nno-hosts\ndomain=%s\nlocal=/%s/\naddn-hosts=%s/addn-hosts\ndhcp-hostsfile=%s/dhcp-hosts\npid-file=%s/dnsmasq.pid\nlog-facility=-\n",
			masterAddr(i), zone, zone, m.dmDir, m.dmDir, m.dmDir)
		if err := os.WriteFile(filepath.Join(m.dmDir, "dnsmasq.conf"), []byte(dm), 0o644); err != nil {
			return err
		}
		m.proc = newProc(m.id, filepath.Join(w.dir, m.id+".log"), "ip", "netns", "exec", nsName(i), w.cfg.brine, "master", "-c", m.confDir)
		m.dnsmasq = newProc(m.id+"-dnsmasq", filepath.Join(m.dmDir, "dnsmasq.log"),
			"ip", "netns", "exec", nsName(i), "dnsmasq", "-k", "-C", filepath.Join(m.dmDir, "dnsmasq.conf"))
		w.masters = append(w.masters, m)
	}
	return nil
}

// writeAgents writes the agents' minion files: the first half fail over
// (Salt's master_type failover, a random master first), the others are
// connected to every master (hot multi-master).
func (w *world) writeAgents() error {
	var list []string
	for i := 1; i <= 3; i++ {
		list = append(list, masterAddr(i))
	}
	for n := 1; n <= w.cfg.agents; n++ {
		a := &agent{id: fmt.Sprintf("a%02d", n), dir: filepath.Join(w.dir, "agents", fmt.Sprintf("a%02d", n)), failover: n <= (w.cfg.agents+1)/2}
		if err := os.MkdirAll(a.dir, 0o700); err != nil {
			return err
		}
		mode := "master_type: str\n"
		if a.failover {
			mode = "master_type: failover\nrandom_master: True\n"
		}
		conf := fmt.Sprintf("id: %s\nmaster: [%s]\nmaster_port: 4506\npki_dir: pki\ncachedir: cache\nlog_level: info\n"+
			"acceptance_wait_time: 1\nacceptance_wait_time_max: 2\nrandom_reauth_delay: 1\n%s",
			a.id, strings.Join(list, ", "), mode)
		if err := os.WriteFile(filepath.Join(a.dir, "minion"), []byte(conf), 0o600); err != nil {
			return err
		}
		a.proc = newProc(a.id, filepath.Join(a.dir, "agent.log"), w.cfg.brine, "agent", "-c", a.dir)
		w.agents = append(w.agents, a)
	}
	return nil
}

// brine runs the CLI against master m with a deadline.
func (w *world) brine(ctx context.Context, m *master, timeout time.Duration, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.cfg.brine, append([]string{"-c", m.confDir}, args...)...)
	cmd.WaitDelay = time.Second
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// waitMaster waits until m answers a request.
func (w *world) waitMaster(ctx context.Context, m *master, within time.Duration) error {
	err := masterproc.Poll(ctx, within, 500*time.Millisecond, func() bool {
		_, _, err := w.brine(ctx, m, 5*time.Second, "run", "test.ping", "--json")
		return err == nil
	})
	if err != nil {
		return fmt.Errorf("master %s did not answer within %s: %s", m.id, within, masterproc.Tail(m.proc.logPath, 20))
	}
	return nil
}

// ping is `brine exec '*' test.ping` on m: the agents that answered.
func (w *world) ping(ctx context.Context, m *master, timeout string) (map[string]any, error) {
	out, errs, err := w.brine(ctx, m, time.Minute, "exec", "*", "test.ping", "--json", "-t", timeout)
	var rets map[string]any
	if jerr := json.Unmarshal([]byte(out), &rets); jerr != nil && err == nil {
		err = fmt.Errorf("%v: %s%s", jerr, out, errs)
	}
	return rets, err
}

// acceptedAfter finds in the agent's log its first acceptance by a
// master after t: when, and by which master's address.
func (a *agent) acceptedAfter(t time.Time) (time.Time, string, bool) {
	f, err := os.Open(a.proc.logPath)
	if err != nil {
		return time.Time{}, "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `msg="accepted by the master; agent started"`) {
			continue
		}
		ts, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || !at.After(t) {
			continue
		}
		_, rest, _ := strings.Cut(line, "master=tcp://")
		addr, _, _ := strings.Cut(rest, ":")
		return at, addr, true
	}
	return time.Time{}, "", false
}

// connectedTo is the master a failover agent was last accepted by, from
// its log ("" before the first).
func (a *agent) connectedTo() string {
	f, err := os.Open(a.proc.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	last := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "=== chaos: start") {
			last = ""
		}
		if !strings.Contains(line, `msg="accepted by the master; agent started"`) {
			continue
		}
		if _, rest, ok := strings.Cut(line, "master=tcp://"); ok {
			last, _, _ = strings.Cut(rest, ":")
		}
	}
	return last
}

func (w *world) close() {
	for _, a := range w.agents {
		a.proc.kill()
	}
	for _, m := range w.masters {
		m.proc.kill()
		m.dnsmasq.kill()
	}
	if w.sim != nil {
		w.sim.kill()
	}
	if w.slack != nil {
		w.slack.close()
	}
	if w.bind != nil {
		w.bind.Close()
	}
	netDown(3)
}
