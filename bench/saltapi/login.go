package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
)

// attackerIP is the guessing address: loopback, but not the valid
// callers' 127.0.0.1, so that salt-api counts its failures apart.
var attackerIP = net.IPv4(127, 0, 0, 2)

// Login is valid logins' latency before and during a guessing attack from
// another address, and how the attacker was answered.
type Login struct {
	// Before and During are valid logins from 127.0.0.1, one after the
	// other, each timed from sending POST /login to having read its reply
	// (a token minted, a salt/auth/netapi event stored).
	Before report.Dist `json:"before"`
	During report.Dist `json:"during"`
	// P99Ratio is During.P99 / Before.P99.
	P99Ratio    float64 `json:"p99_ratio"`
	ValidFailed int     `json:"valid_failed"`
	// Probe is the statuses of the attacker's first wrong passwords, sent
	// one at a time; FailuresBefore429 the 401s before the first 429, and
	// RetryAfter that 429's Retry-After.
	Probe             []int  `json:"probe_statuses"`
	FailuresBefore429 int    `json:"failures_before_429"`
	RetryAfter        string `json:"retry_after"`
	// RightPasswordStatus is what the turned-away address gets for the
	// right password: 429 too, so that the limit does not tell a guesser
	// when it found the password.
	RightPasswordStatus int `json:"right_password_from_attacker_status"`
	// The hammering during the valid logins: Hammers connections sending
	// wrong passwords back to back from 127.0.0.2.
	Hammers           int            `json:"hammers"`
	HammerRequests    int64          `json:"hammer_requests"`
	HammerPerSecond   float64        `json:"hammer_requests_per_second"`
	HammerStatuses    map[string]int `json:"hammer_statuses"`
	HammerUnthrottled int            `json:"hammer_unthrottled"`
	MasterCPUMsBefore float64        `json:"master_cpu_ms_before"`
	MasterCPUMsDuring float64        `json:"master_cpu_ms_during"`
}

// logins times o.logins valid logins alone, probes the attacker's first
// failures, then times as many valid logins while the attacker hammers.
func logins(ctx context.Context, o options, api *client, pid int) (Login, error) {
	l := Login{Hammers: o.hammers, HammerStatuses: map[string]int{}}
	valid := func() ([]time.Duration, float64) {
		c0 := report.ProcCPU(pid)
		ds := make([]time.Duration, 0, o.logins)
		for range o.logins {
			t0 := time.Now()
			if _, _, err := api.login(ctx, apiPassword); err != nil {
				l.ValidFailed++
				continue
			}
			ds = append(ds, time.Since(t0))
		}
		return ds, report.Round(float64(report.ProcCPU(pid)-c0)/float64(time.Millisecond), 1)
	}
	before, cpu := valid()
	l.Before, l.MasterCPUMsBefore = report.DistOf(before), cpu

	// The attacker's own connections, from 127.0.0.2.
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: attackerIP}, Timeout: 10 * time.Second}
	attacker := &client{base: api.base, http: &http.Client{Timeout: time.Minute,
		Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: o.hammers + 1}}}
	defer attacker.http.CloseIdleConnections()

	// The probe: wrong passwords one at a time until the first 429.
	for range 2 * targetFailuresBefore {
		status, retry, err := attacker.try(ctx, "wrong-"+strconv.Itoa(len(l.Probe)))
		if err != nil {
			return l, fmt.Errorf("login probe from %s: %w", attackerIP, err)
		}
		l.Probe = append(l.Probe, status)
		if status == http.StatusTooManyRequests {
			l.RetryAfter = retry
			break
		}
		if status == http.StatusUnauthorized {
			l.FailuresBefore429++
		}
	}
	status, _, err := attacker.try(ctx, apiPassword)
	if err != nil {
		return l, fmt.Errorf("the right password from %s: %w", attackerIP, err)
	}
	l.RightPasswordStatus = status

	// The attack under the valid logins.
	hctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var requests atomic.Int64
	for h := range o.hammers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; hctx.Err() == nil; i++ {
				status, _, err := attacker.try(hctx, fmt.Sprintf("guess-%d-%d", h, i))
				if hctx.Err() != nil {
					return
				}
				requests.Add(1)
				key := strconv.Itoa(status)
				if err != nil {
					key = "error"
				}
				mu.Lock()
				l.HammerStatuses[key]++
				if status != http.StatusTooManyRequests {
					l.HammerUnthrottled++
				}
				mu.Unlock()
			}
		}()
	}
	t0 := time.Now()
	// The attack in full swing first: a turned-away address's answers are
	// held for a second (saltapi's tarpit), so the hammers' first answers
	// come after that.
	time.Sleep(1500 * time.Millisecond)
	during, cpu := valid()
	// And long enough for the held answers to be counted.
	masterproc.Sleep(ctx, time.Until(t0.Add(minAttack)))
	stop()
	wg.Wait()
	l.During, l.MasterCPUMsDuring = report.DistOf(during), cpu
	l.HammerRequests = requests.Load()
	l.HammerPerSecond = report.Round(float64(l.HammerRequests)/time.Since(t0).Seconds(), 0)
	if l.Before.P99 > 0 {
		l.P99Ratio = report.Round(l.During.P99/l.Before.P99, 2)
	}
	return l, nil
}

// minAttack is the least time the hammers run for, answers held included.
const minAttack = 4 * time.Second

// try logs in with password and returns the status and Retry-After; a
// refusal is no error, only a request that got no answer.
func (c *client) try(ctx context.Context, password string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/login", strings.NewReader(loginBody(password)))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}
