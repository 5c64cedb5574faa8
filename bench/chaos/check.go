package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/mine"
)

// findings is what the checks found: the violations (any fails the run)
// and the figures the report gives beside them.
type findings struct {
	Violations []string       `json:"violations"`
	Figures    map[string]any `json:"figures"`
	// reactions are the matched events whose reaction succeeded.
	reactions []reaction
}

// reaction is when a matched event was stored and when its reaction first
// succeeded.
type reaction struct{ stored, done time.Time }

func (f *findings) violate(format string, args ...any) {
	// The same kind of violation many times is summarized by the first
	// few and a count.
	if len(f.Violations) < 40 {
		f.Violations = append(f.Violations, fmt.Sprintf(format, args...))
	} else {
		n, _ := f.Figures["violations_not_listed"].(int)
		f.Figures["violations_not_listed"] = n + 1
	}
}

var errSentinel = errors.New("sentinel reached")

// readLog reads the event log from since through a sentinel event sent
// now, through master m: every event stored, in log order.
func (w *world) readLog(ctx context.Context, m *master, since time.Time) ([]*bus.Event, error) {
	out, errs, err := w.brine(ctx, m, 30*time.Second, "event", "send", "chaos/end", "{}")
	if err != nil {
		return nil, fmt.Errorf("the sentinel event via %s: %v: %s", m.id, err, errs)
	}
	sentinel := strings.TrimSpace(out)
	key, err := gateway.LoadKey(filepath.Join(m.confDir, "data", "master.key"))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	c, err := gateway.Dial(ctx, masterAddr(m.i)+":4506", key)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var evs []*bus.Event
	err = c.Watch(ctx, masterAddr(m.i)+":4505", "", bus.Since{Time: since}, func(ev *bus.Event) error {
		evs = append(evs, ev)
		if ev.ID == sentinel {
			return errSentinel
		}
		return nil
	})
	if !errors.Is(err, errSentinel) {
		return nil, fmt.Errorf("reading the event log from %s: %v (after %d events)", m.id, err, len(evs))
	}
	return evs, nil
}

// check runs every invariant on the log and the world as they are now.
func (w *world) check(ctx context.Context, l *workload, since time.Time) *findings {
	f := &findings{Figures: map[string]any{}}
	evs, err := w.readLog(ctx, w.masters[0], since)
	if err != nil {
		f.violate("%v", err)
		return f
	}
	f.Figures["events_in_log"] = len(evs)
	w.lastLog = evs
	w.checkEvents(l, evs, f)
	w.checkJobs(ctx, evs, f)
	w.checkDNS(ctx, f)
	return f
}

// checkEvents: every acknowledged event stored exactly once; every
// matched one's reaction ran (succeeded) at least once; every
// orchestration finished.
func (w *world) checkEvents(l *workload, evs []*bus.Event, f *findings) {
	stored := map[string]int{}
	reacted := map[string][]time.Time{}
	orchNew, orchRet := map[string]bool{}, map[string]bool{}
	for _, ev := range evs {
		stored[ev.ID]++
		kind, jid, what, _, ok := jobs.ParseTag(ev.Tag)
		if !ok || kind != jobs.KindRun {
			continue
		}
		d, _ := ev.DataMap()
		if fun, _ := d["fun"].(string); what == "new" && strings.TrimPrefix(fun, "runner.") == "state.orchestrate" {
			orchNew[jid] = true
		}
		if what == "ret" {
			orchRet[jid] = true
			if d["success"] == true && ev.Cause != "" {
				reacted[ev.Cause] = append(reacted[ev.Cause], ev.Time)
			}
		}
	}
	l.mu.Lock()
	acked := slices.Clone(l.acked)
	l.mu.Unlock()
	var missing, twice, unreacted, dups int
	for _, a := range acked {
		switch n := stored[a.ID]; {
		case n == 0:
			missing++
			f.violate("event %s (%s) was acknowledged but is not in the log", a.ID, a.Tag)
		case n > 1:
			twice++
			f.violate("event %s (%s) is stored %d times", a.ID, a.Tag, n)
		}
		if !a.Matched {
			continue
		}
		runs := reacted[a.ID]
		if len(runs) == 0 {
			unreacted++
			f.violate("event %s (%s): its reaction never succeeded", a.ID, a.Tag)
			continue
		}
		dups += len(runs) - 1
		t, _ := bus.IDTime(a.ID)
		f.reactions = append(f.reactions, reaction{stored: t, done: runs[0]})
	}
	var orchUnfinished int
	for jid := range orchNew {
		if !orchRet[jid] {
			orchUnfinished++
			f.violate("orchestration %s never finished", jid)
		}
	}
	var lat []time.Duration
	overAckWait := 0
	for _, r := range f.reactions {
		lat = append(lat, r.done.Sub(r.stored))
		if lat[len(lat)-1] > ackWait {
			overAckWait++
		}
	}
	slices.Sort(lat)
	f.Figures["events_acknowledged"] = len(acked)
	f.Figures["events_missing"] = missing
	f.Figures["events_stored_twice"] = twice
	f.Figures["reactions_expected"] = len(f.reactions) + unreacted
	f.Figures["reactions_missing"] = unreacted
	f.Figures["reaction_duplicates"] = dups
	f.Figures["reaction_latency_ms"] = report.DistOf(lat)
	f.Figures["reactions_done_after_the_ack_wait"] = overAckWait
	f.Figures["orchestrations"] = len(orchNew)
	f.Figures["orchestrations_unfinished"] = orchUnfinished
}

// checkJobs: every remote job's returns in the log are in the job store,
// and its Slack thread holds a result for each.
func (w *world) checkJobs(ctx context.Context, evs []*bus.Event, f *findings) {
	rets := map[string]map[string]bool{}
	for _, ev := range evs {
		kind, jid, what, minion, ok := jobs.ParseTag(ev.Tag)
		if !ok || kind != jobs.KindJob {
			continue
		}
		d, _ := ev.DataMap()
		switch what {
		case "new":
			if args, _ := d["arg"].([]any); d["fun"] == "test.arg" && len(args) > 0 && strings.HasPrefix(fmt.Sprint(args[0]), "chaos-job-") {
				rets[jid] = map[string]bool{}
			}
		case "ret":
			if r, ok := rets[jid]; ok {
				r[minion] = true
			}
		}
	}
	threads, reposted := w.slack.threads()
	var returns, unstored, unthreaded int
	for jid, r := range rets {
		returns += len(r)
		out, errs, err := w.brine(ctx, w.masters[0], 30*time.Second, "jobs", "show", jid, "--json")
		var j jobs.Job
		if err == nil {
			err = json.Unmarshal([]byte(out), &j)
		}
		if err != nil {
			f.violate("job %s: brine jobs show: %v: %s", jid, err, lastLine(errs))
			continue
		}
		thread, posted := threads[jid]
		if !posted && len(r) > 0 {
			f.violate("job %s has no Slack thread", jid)
		}
		for id := range r {
			if _, ok := j.Returns[id]; !ok {
				unstored++
				f.violate("job %s: %s's return is in the log but not in the job store", jid, id)
			}
			if posted && !thread[id] {
				unthreaded++
				f.violate("job %s: %s's result is not in its Slack thread", jid, id)
			}
		}
	}
	f.Figures["remote_jobs"] = len(rets)
	f.Figures["job_returns"] = returns
	f.Figures["job_returns_not_stored"] = unstored
	f.Figures["slack_results_missing"] = unthreaded
	f.Figures["slack_parents_posted_twice"] = reposted
}

// checkDNS: BIND's zone, each master's dnsmasq files and what each
// dnsmasq answers all equal the mine's VMs.
func (w *world) checkDNS(ctx context.Context, f *findings) {
	out, errs, err := w.brine(ctx, w.masters[0], 30*time.Second, "mine", "list", "--json")
	var hosts []mine.Host
	if err == nil {
		err = json.Unmarshal([]byte(out), &hosts)
	}
	if err != nil {
		f.violate("brine mine list: %v: %s", err, lastLine(errs))
		return
	}
	want := map[string][]string{} // vm → its IPv4 addresses, sorted
	macs := map[string][]string{}
	for _, h := range hosts {
		if !strings.HasPrefix(h.ID, "vm") {
			continue
		}
		for _, s := range h.IPs {
			if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
				want[h.ID] = append(want[h.ID], a.String())
			}
		}
		slices.Sort(want[h.ID])
		macs[h.ID] = h.MACs
	}
	f.Figures["vms_in_mine"] = len(want)

	got, ptrs, err := w.zone()
	if err != nil {
		f.violate("BIND zone transfer: %v", err)
		return
	}
	for vm, ips := range want {
		if !slices.Equal(got[vm], ips) {
			f.violate("BIND: %s.%s has A %v, the mine %v", vm, zone, got[vm], ips)
		}
		for _, a := range ips {
			if ptrs[a] != vm+"."+zone+"." {
				f.violate("BIND: PTR of %s is %q, want %s.%s.", a, ptrs[a], vm, zone)
			}
		}
	}
	for vm, ips := range got {
		if _, ok := want[vm]; !ok {
			f.violate("BIND: %s.%s (A %v) is not in the mine", vm, zone, ips)
		}
	}
	for a, name := range ptrs {
		vm := strings.TrimSuffix(name, "."+zone+".")
		if !slices.Contains(want[vm], a) {
			f.violate("BIND: PTR %s → %s is not in the mine", a, name)
		}
	}

	for _, m := range w.masters {
		w.checkDnsmasq(m, want, macs, f)
	}
}

// zone transfers the forward and reverse zones: A records by VM name and
// PTR targets by address (VM names only).
func (w *world) zone() (map[string][]string, map[string]string, error) {
	a, ptr := map[string][]string{}, map[string]string{}
	for _, z := range []string{zone, reverseZone} {
		rrs, err := w.bind.Transfer(z)
		if err != nil {
			return nil, nil, err
		}
		for _, rr := range rrs {
			switch r := rr.(type) {
			case *dns.A:
				if name := strings.TrimSuffix(r.Hdr.Name, "."+zone+"."); strings.HasPrefix(name, "vm") {
					a[name] = append(a[name], r.A.String())
				}
			case *dns.PTR:
				if addr, err := reverseAddr(r.Hdr.Name); err == nil {
					ptr[addr] = r.Ptr
				}
			}
		}
	}
	for vm := range a {
		slices.Sort(a[vm])
	}
	return a, ptr, nil
}

// reverseAddr is the IPv4 address of an in-addr.arpa name.
func reverseAddr(name string) (string, error) {
	p := strings.Split(strings.TrimSuffix(name, ".in-addr.arpa."), ".")
	if len(p) != 4 {
		return "", fmt.Errorf("%s: not a host's reverse name", name)
	}
	slices.Reverse(p)
	return strings.Join(p, "."), nil
}

// checkDnsmasq compares master m's two files, and what its dnsmasq
// answers, with the mine's VMs (want: their IPv4 addresses; macs: their
// hardware addresses).
func (w *world) checkDnsmasq(m *master, want, macs map[string][]string, f *findings) {
	dhcp, addn := map[string][]string{}, map[string][]string{}
	for _, file := range []string{"dhcp-hosts", "addn-hosts"} {
		b, err := os.ReadFile(filepath.Join(m.dmDir, file))
		if err != nil {
			f.violate("%s: %v", m.id, err)
			return
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if file == "addn-hosts" {
				p := strings.Fields(line)
				name := strings.TrimSuffix(p[len(p)-1], "."+zone)
				addn[name] = append(addn[name], p[0])
				continue
			}
			p := strings.Split(line, ",")
			switch {
			case len(p) >= 3 && slices.Contains(macs[p[2]], p[0]):
				dhcp[p[2]] = append(dhcp[p[2]], p[1])
			case len(p) >= 2 && len(macs[p[0]]) == 0 && net.ParseIP(p[1]) != nil:
				// name,ip: dnsmasq's reservation by name, which the
				// renderer writes for a host the mine knows no MAC of (a
				// VM whose created event, which carries its MACs, a fault
				// cut short, while waiting_for_ssh gave its address).
				dhcp[p[0]] = append(dhcp[p[0]], p[1])
			default:
				f.violate("%s: dhcp-hosts line %q: not a MAC the mine holds for its host", m.id, line)
			}
		}
	}
	for _, got := range []map[string][]string{dhcp, addn} {
		for vm := range got {
			slices.Sort(got[vm])
		}
	}
	for vm, ips := range want {
		if !slices.Equal(dhcp[vm], ips) || !slices.Equal(addn[vm], ips) {
			f.violate("%s: dnsmasq files hold %s at %v (dhcp-hosts) and %v (addn-hosts), the mine %v", m.id, vm, dhcp[vm], addn[vm], ips)
		}
	}
	for _, got := range []map[string][]string{dhcp, addn} {
		for vm := range got {
			if _, ok := want[vm]; !ok {
				f.violate("%s: dnsmasq files hold %s, which is not in the mine", m.id, vm)
			}
		}
	}
	// dnsmasq re-read them: it answers for every VM of the mine and for
	// none of the others of the pool.
	c := &dns.Client{Timeout: 2 * time.Second}
	for n := 1; n <= 6; n++ {
		vm := fmt.Sprintf("vm%02d", n)
		q := new(dns.Msg)
		q.SetQuestion(vm+"."+zone+".", dns.TypeA)
		r, _, err := c.Exchange(q, masterAddr(m.i)+":5353")
		if err != nil {
			f.violate("%s: its dnsmasq does not answer: %v", m.id, err)
			return
		}
		var got []string
		for _, rr := range r.Answer {
			if a, ok := rr.(*dns.A); ok {
				got = append(got, a.A.String())
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want[vm]) {
			f.violate("%s: its dnsmasq answers %s with %v, the mine holds %v", m.id, vm, got, want[vm])
		}
	}
}
