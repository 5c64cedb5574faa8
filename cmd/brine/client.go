package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
)

// clientFlags locate and authenticate against a master.
type clientFlags struct {
	master      string
	publishPort int
	keyFile     string
	timeout     time.Duration
}

func (c *clientFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.master, "master", "", "master HOST[:PORT] of its request port (default: interface:ret_port from the config, 127.0.0.1:4506)")
	cmd.Flags().IntVar(&c.publishPort, "publish-port", 0, "master's publish port (default: publish_port from the config, 4505)")
	cmd.Flags().DurationVar(&c.timeout, "timeout", 10*time.Second, "give up when the master does not answer within this time")
	cmd.Flags().StringVar(&c.keyFile, "key-file", "", "file holding the master's key (default: $BRINE_KEY, $BRINE_KEY_FILE, key_file, <data_dir>/master.key)")
}

// longTimeout gives a command whose request runs jobs a --timeout of ten
// minutes instead of the ten seconds of a query.
func (c *clientFlags) longTimeout(cmd *cobra.Command, usage string) {
	f := cmd.Flags().Lookup("timeout")
	f.Usage = usage
	f.DefValue = "10m0s"
	_ = f.Value.Set(f.DefValue)
}

// endpoints resolves the master's request and publish addresses and the key.
func (c *clientFlags) endpoints(g *globalFlags) (reqAddr, pubAddr string, key []byte, err error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return "", "", nil, err
	}
	s := cfg.Settings
	host, port := s.Interface, strconv.Itoa(s.RetPort)
	if host == "0.0.0.0" || host == "" {
		host = "127.0.0.1"
	}
	if c.master != "" {
		host = c.master
		if h, p, err := net.SplitHostPort(c.master); err == nil {
			host, port = h, p
		}
	}
	pub := s.PublishPort
	if c.publishPort != 0 {
		pub = c.publishPort
	}
	reqAddr = net.JoinHostPort(host, port)
	pubAddr = net.JoinHostPort(host, strconv.Itoa(pub))

	if k := os.Getenv("BRINE_KEY"); k != "" && c.keyFile == "" {
		return reqAddr, pubAddr, []byte(strings.TrimSpace(k)), nil
	}
	path := c.keyFile
	if path == "" {
		path = os.Getenv("BRINE_KEY_FILE")
	}
	if path == "" {
		path = s.KeyFile
	}
	key, err = gateway.LoadKey(path)
	if err != nil {
		return "", "", nil, fmt.Errorf("master key: %w (pass --key-file or set BRINE_KEY)", err)
	}
	return reqAddr, pubAddr, key, nil
}

// connectTimeout bounds reaching the master, whatever --timeout allows
// the request: `brine run` waits ten minutes for a job, not for a master
// that is not there.
const connectTimeout = 10 * time.Second

// dial connects to the master, within --timeout and connectTimeout. A
// master that cannot be reached is an unreachableError (exit 3) saying
// why: "master 127.0.0.1:4506 not reachable: connection refused".
func (c *clientFlags) dial(ctx context.Context, addr string, key []byte) (*gateway.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	client, err := gateway.Dial(dctx, addr, key)
	if ue, ok := errors.AsType[*gateway.UnreachableError](err); ok {
		return nil, unreachableError{ue}
	}
	if err != nil {
		return nil, c.masterError(addr, fmt.Errorf("master %s: %w", addr, err))
	}
	return client, nil
}

// masterError is the one rule for what went wrong talking to the master at
// addr, for every command: a master that does not answer in time is
// unreachable (exit 3); a key it refuses, or an answer that is an error, is
// a plain failure (exit 1).
func (c *clientFlags) masterError(addr string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, gateway.ErrAuth) {
		return unreachableError{fmt.Errorf("master %s did not answer within %s", addr, c.timeout.Round(time.Millisecond))}
	}
	return err
}

// callMaster runs one request against the master, bounded by --timeout.
func callMaster(ctx context.Context, g *globalFlags, cf *clientFlags, method string, in, out any) error {
	reqAddr, _, key, err := cf.endpoints(g)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	client, err := cf.dial(ctx, reqAddr, key)
	if err != nil {
		return err
	}
	defer client.Close()
	return cf.masterError(reqAddr, client.Call(ctx, method, in, out))
}

// runFunction runs the master function fun through call (a connection's
// Call, or callMaster) as this user, and decodes its return into out; a
// failed run is an error naming its job.
func runFunction(ctx context.Context, call func(ctx context.Context, method string, in, out any) error, fun string, kwargs map[string]any, out any) error {
	user, err := osUser()
	if err != nil {
		return err
	}
	var reply json.RawMessage
	if err := call(ctx, rpc.Run, rpc.RunRequest{Fun: fun, Kwargs: kwargs, User: user}, &reply); err != nil {
		return err
	}
	var res struct {
		jobs.Result
		Return json.RawMessage `json:"return"`
	}
	if err := json.Unmarshal(reply, &res); err != nil {
		return fmt.Errorf("%s: reply: %w", fun, err)
	}
	if !res.Success {
		return fmt.Errorf("%s failed (job %s): %s", fun, res.JID, res.Error)
	}
	if err := json.Unmarshal(res.Return, out); err != nil {
		return fmt.Errorf("%s returned %s: %w", fun, res.Return, err)
	}
	return nil
}
