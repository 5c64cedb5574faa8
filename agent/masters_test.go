package agent

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func loadMinion(t *testing.T, body string) (*Loaded, error) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "minion"), body)
	return LoadConfig(dir)
}

func TestSeveralMastersConfiguration(t *testing.T) {
	cases := []struct {
		name, body string
		check      func(t *testing.T, c *Loaded)
	}{
		{"salt's defaults", "master: [m1, m2]\n", func(t *testing.T, c *Loaded) {
			if c.MasterType != "str" || c.MasterAliveInterval != 0 || c.RetryDNS != 30 || c.RetryDNSCount != nil || !c.hot() {
				t.Errorf("defaults: %+v", c.Config)
			}
		}},
		{"failover checks liveness by default", "master: [m1, m2]\nmaster_type: failover\n", func(t *testing.T, c *Loaded) {
			if c.hot() || c.MasterAliveInterval != DefaultFailoverAliveInterval || c.aliveEvery() != 3*time.Second {
				t.Errorf("failover: %+v", c.Config)
			}
		}},
		{"failover without liveness", "master: [m1, m2]\nmaster_type: failover\nmaster_alive_interval: 0\n", func(t *testing.T, c *Loaded) {
			if c.aliveEvery() != 0 {
				t.Errorf("alive = %v", c.aliveEvery())
			}
		}},
		{"failback falls back on master_alive_interval", "master: [m1, m2]\nmaster_type: failover\nmaster_failback: True\nmaster_alive_interval: 7\n", func(t *testing.T, c *Loaded) {
			if c.failbackEvery() != 7*time.Second {
				t.Errorf("failback every %v", c.failbackEvery())
			}
		}},
		{"failback interval", "master: [m1, m2]\nmaster_type: failover\nmaster_failback: True\nmaster_failback_interval: 20\n", func(t *testing.T, c *Loaded) {
			if c.failbackEvery() != 20*time.Second {
				t.Errorf("failback every %v", c.failbackEvery())
			}
		}},
		{"failback only in failover mode", "master: [m1, m2]\nmaster_failback: True\nmaster_failback_interval: 20\n", func(t *testing.T, c *Loaded) {
			if c.failbackEvery() != 0 || !slices.Contains(c.Notes, "master_failback is used only with master_type: failover; ignored") {
				t.Errorf("failback every %v, notes %q", c.failbackEvery(), c.Notes)
			}
		}},
		{"a single master fails over to itself, as Salt's list of one", "master: m1\nmaster_type: failover\n", func(t *testing.T, c *Loaded) {
			if c.hot() || len(c.Master) != 1 {
				t.Errorf("%+v", c.Config)
			}
		}},
		{"master_shuffle is random_master", "master: [m1, m2]\nmaster_shuffle: True\n", func(t *testing.T, c *Loaded) {
			if !c.RandomMaster || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "deprecated") {
				t.Errorf("random %v, notes %q", c.RandomMaster, c.Notes)
			}
		}},
		{"random_master with one master", "master: m1\nrandom_master: True\n", func(t *testing.T, c *Loaded) {
			if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "only one master") {
				t.Errorf("notes %q", c.Notes)
			}
		}},
		{"retry_dns", "retry_dns: 2.5\nretry_dns_count: 0\n", func(t *testing.T, c *Loaded) {
			if c.retryDNSEvery() != 2500*time.Millisecond || c.RetryDNSCount == nil || *c.RetryDNSCount != 0 {
				t.Errorf("retry_dns %v count %v", c.retryDNSEvery(), c.RetryDNSCount)
			}
		}},
		{"ports in the list", "master: ['10.0.0.1:4510', m2, '[2001:db8::1]:4511', '2001:db8::2', '[2001:db8::3]']\nmaster_port: 4600\n", func(t *testing.T, c *Loaded) {
			want := []string{"tcp://10.0.0.1:4510", "tcp://m2:4600", "tcp://[2001:db8::1]:4511", "tcp://[2001:db8::2]:4600", "tcp://[2001:db8::3]:4600"}
			if got := c.Addrs(); !reflect.DeepEqual(got, want) {
				t.Errorf("addrs = %v, want %v", got, want)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadMinion(t, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Warnings) > 0 {
				t.Errorf("warnings: %v", c.Warnings)
			}
			tc.check(t, c)
		})
	}
}

func TestSeveralMastersRefusals(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"func", "master: mod.fun\nmaster_type: func\n", `minion:2: master_type: "func" is not one of str, failover (Salt's func is not supported)`},
		{"disable", "master_type: disable\n", `minion:1: master_type: "disable" is not one of str, failover`},
		{"other", "master_type: x\n", `minion:1: master_type: "x" is not one of str, failover`},
		{"alive", "master_alive_interval: -1\n", "minion:1: master_alive_interval: -1 is below 0"},
		{"failback interval", "master_failback_interval: -5\n", "minion:1: master_failback_interval: -5 is below 0"},
		{"retry_dns", "retry_dns: -1\n", "minion:1: retry_dns: -1 is below 0"},
		{"retry_dns_count", "retry_dns_count: -2\n", "minion:1: retry_dns_count: -2 is below 0"},
		{"failback without any interval", "master: [a, b]\nmaster_type: failover\nmaster_alive_interval: 0\nmaster_failback: True\n",
			"minion:4: master_failback: needs master_failback_interval"},
		{"port", "master: ['m1:99999']\n", `minion:1: master: "m1:99999": "99999" is not a port`},
		{"port name", "master: 'm1:ret'\n", `minion:1: master: "m1:ret": "ret" is not a port`},
		{"bracket", "master: '[::1'\n", `no closing ]`},
		{"v6 without brackets", "master: 'fe80::zz'\n", `write [address]:port`},
		{"type", "master_failback: maybe\n", `minion:1: master_failback: want true or false, got "maybe"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadMinion(t, tc.body)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// reverse is a deterministic "shuffle" for masterOrder.
func reverse(n int, swap func(i, j int)) {
	for i := 0; i < n/2; i++ {
		swap(i, n-1-i)
	}
}

func TestMasterOrder(t *testing.T) {
	list := []string{"a", "b", "c", "d"}
	cases := []struct {
		name              string
		random, keepFirst bool
		want              []string
	}{
		{"as configured", false, false, []string{"a", "b", "c", "d"}},
		{"shuffled", true, false, []string{"d", "c", "b", "a"}},
		{"failback keeps the first", true, true, []string{"a", "d", "c", "b"}},
		{"failback alone changes nothing", false, true, []string{"a", "b", "c", "d"}},
	}
	for _, tc := range cases {
		if got := masterOrder(list, tc.random, tc.keepFirst, reverse); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if !reflect.DeepEqual(list, []string{"a", "b", "c", "d"}) {
		t.Errorf("the configured list was changed: %v", list)
	}
	if got := masterOrder([]string{"a"}, true, false, reverse); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("one master: %v", got)
	}
}

func TestFailoverWrapsRoundAndFailsBack(t *testing.T) {
	cases := []struct {
		n, lost  int
		failback bool
		want     []int
	}{
		{3, 0, false, []int{1, 2, 0}}, // the master lost is tried last
		{3, 1, false, []int{2, 0, 1}},
		{3, 2, false, []int{0, 1, 2}}, // wrapping round
		{3, 2, true, []int{0, 1, 2}},  // failback: the first again
		{3, 1, true, []int{0, 1, 2}},
		{1, 0, false, []int{0}}, // a lone master: itself again
	}
	for _, tc := range cases {
		if got := attempts(tc.n, nextMaster(tc.n, tc.lost, tc.failback)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("n=%d lost=%d failback=%v: %v, want %v", tc.n, tc.lost, tc.failback, got, tc.want)
		}
	}
}

func TestAliveTimeout(t *testing.T) {
	for every, want := range map[time.Duration]time.Duration{
		time.Second: 2 * time.Second, 3 * time.Second: 3 * time.Second, 30 * time.Second: 10 * time.Second,
	} {
		if got := aliveTimeout(every); got != want {
			t.Errorf("aliveTimeout(%v) = %v, want %v", every, got, want)
		}
	}
}

func TestNewLinks(t *testing.T) {
	hot, err := loadMinion(t, "master: [m1, m2, m3]\n")
	if err != nil {
		t.Fatal(err)
	}
	links := newLinks(&hot.Config)
	if len(links) != 3 || !reflect.DeepEqual(links[1].order, []string{"tcp://m2:4506"}) {
		t.Errorf("hot mode: one link per master, got %d", len(links))
	}
	fo, err := loadMinion(t, "master: [m1, m2, m3]\nmaster_type: failover\n")
	if err != nil {
		t.Fatal(err)
	}
	links = newLinks(&fo.Config)
	if len(links) != 1 || !reflect.DeepEqual(links[0].order, []string{"tcp://m1:4506", "tcp://m2:4506", "tcp://m3:4506"}) {
		t.Errorf("failover mode: one link along the list, got %v", links[0].order)
	}
	// A change of the masters' keys reconnects on reload; others do not.
	other, err := loadMinion(t, "master: [m1, m2, m3]\nmaster_type: failover\nmine_interval: 5\n")
	if err != nil {
		t.Fatal(err)
	}
	if fo.connection() != other.connection() || fo.connection() == hot.connection() {
		t.Error("connection(): want equal for an unrelated change, different for master_type")
	}
}

// TestUnresolvableMaster: a lone master whose name does not resolve is
// tried again every retry_dns seconds, retry_dns_count times, then given
// up on; with a list, the agent moves on instead of waiting.
func TestUnresolvableMaster(t *testing.T) {
	a := testAgent(t, t.TempDir())
	const bad = "brine-test.invalid" // RFC 6761: never resolves
	// The resolver's answer for it, at once: a DNS server's delays (CI's
	// resolver under load took over a second) are not what is timed here.
	lookupHost = func(_ context.Context, host string) ([]string, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	t.Cleanup(func() { lookupHost = net.DefaultResolver.LookupHost })
	cases := []struct {
		name, conf string
		giveUp     bool
		least      time.Duration
	}{
		{"retry_dns 0 gives up at once", "master: " + bad + "\nretry_dns: 0\n", true, 0},
		{"retry_dns_count", "master: " + bad + "\nretry_dns: 0.05\nretry_dns_count: 2\n", true, 100 * time.Millisecond},
		{"a list moves on", "master: [" + bad + ", other." + bad + "]\nmaster_type: failover\nretry_dns: 0\n", false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadMinion(t, tc.conf)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			start := time.Now()
			_, _, err = a.connectFrom(ctx, cfg, newLinks(&cfg.Config)[0], 0)
			took := time.Since(start)
			if tc.giveUp {
				if !errors.Is(err, errUnresolvable) || took < tc.least || took > time.Second {
					t.Errorf("after %v: %v, want %v after at least %v", took, err, errUnresolvable, tc.least)
				}
				return
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a list of masters: %v, want the agent to keep trying until stopped", err)
			}
		})
	}
	if err := resolve(context.Background(), "tcp://127.0.0.1:4506"); err != nil {
		t.Errorf("an address needs no resolving: %v", err)
	}
}
