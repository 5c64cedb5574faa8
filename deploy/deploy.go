// Package deploy is the bootstrap that follows a VM's creation, salt-cloud's
// deploy step: wait until the VM answers on SSH, log in with the profile's
// key or password (trying each ssh_username in turn), verify its host key
// against a trust-on-first-use known_hosts store, upload the profile's
// script to a private temporary directory with the agent's configuration
// beside it (minion: the VM's name as id, the profile's minion settings
// and grains, as salt-cloud leaves it for bootstrap-salt), run it with
// script_args and script_env, stream its output to the log, clean up, and
// fire salt-cloud's deploying and deploy_script events (reactions that
// register DNS key on deploy_script's host).
//
// A profile without script gets the built-in bootstrap (bootstrap-brine,
// where salt-cloud's default is bootstrap-salt): over the same connection
// it asks uname -sm for the VM's OS and architecture, uploads the matching
// brine-agent binary from the master (its sha256 checked on the VM), and
// installs and starts it with the same minion file, so the VM needs no
// internet access.
//
// Settings read from the VM (provider, profile and map keys merged):
// script, script_args, script_env, agent_binaries, ssh_username, ssh_port,
// ssh_interface, ssh_connect_timeout, ssh_host_key_check, password,
// private_key, sudo, sudo_password, tmp_dir, keep_tmp, deploy_fail,
// minion, grains.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
	"golang.org/x/crypto/ssh"

	"github.com/brinehq/brine/cloud"
)

// Errors Deploy returns; test them with errors.Is.
var (
	// ErrAuth: no user name and credential was accepted, in
	// wait_for_passwd_maxtries attempts or before ssh_connect_timeout.
	ErrAuth = errors.New("ssh login refused")
	// ErrUnreachable: the SSH port did not answer before
	// ssh_connect_timeout.
	ErrUnreachable = errors.New("ssh port did not answer")
	// ErrScriptFailed: the deploy script exited non-zero (and deploy_fail
	// is not ignore).
	ErrScriptFailed = errors.New("deploy script failed")
)

// KnownHostsFile is the name of the host key store in the data directory.
const KnownHostsFile = "known_hosts"

// Config configures a Deployer.
type Config struct {
	// DataDir holds KnownHostsFile.
	DataDir string
	// ScriptDirs are searched for a script named without a path
	// (salt-cloud's deploy_scripts_search_path, <config>/cloud.deploy.d).
	ScriptDirs []string
	// AgentDirs are searched for the built-in bootstrap's agent binaries
	// after a VM's agent_binaries (default: DefaultAgentDirs).
	AgentDirs []string
	// Log receives progress and every line the script prints (default:
	// discard).
	Log *slog.Logger
	// Output, when set, also receives the script's output, each line
	// prefixed with the VM's name (brine cloud --verbose).
	Output io.Writer
}

// Deployer runs the deploy step; it implements cloud.Deployer and is safe
// for VMs deployed in parallel.
type Deployer struct {
	cfg   Config
	trust *trustStore

	outMu sync.Mutex
}

// New returns a Deployer whose host key store is in cfg.DataDir.
func New(cfg Config) (*Deployer, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("deploy: no data directory for the known hosts")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.AgentDirs == nil {
		cfg.AgentDirs = DefaultAgentDirs()
	}
	t, err := newTrustStore(filepath.Join(cfg.DataDir, KnownHostsFile))
	if err != nil {
		return nil, err
	}
	return &Deployer{cfg: cfg, trust: t}, nil
}

// Deploy bootstraps node as vm's settings say and fires deploying (before
// connecting, as salt-cloud does) and deploy_script (after the script
// succeeded). A VM whose profile names no script (or script:
// bootstrap-brine) gets the built-in bootstrap.
func (d *Deployer) Deploy(ctx context.Context, vm *cloud.VM, node *cloud.Node, fire func(ctx context.Context, task string, data map[string]any) error) error {
	o, err := parseOptions(vm, node, d.cfg.ScriptDirs, d.cfg.AgentDirs)
	if err != nil {
		return err
	}
	log := d.cfg.Log.With("vm", vm.Name, "host", o.host, "port", o.port)
	for _, w := range o.ignored {
		log.Warn(w)
	}
	if err := fire(ctx, "deploying", map[string]any{"event": "executing deploy script", "kwargs": o.kwargs()}); err != nil {
		return err
	}
	client, user, err := d.connect(ctx, o, log)
	if err != nil {
		return err
	}
	defer client.Close()
	stop := context.AfterFunc(ctx, func() { client.Close() })
	defer stop()
	log = log.With("user", user)
	out := &outputTail{}
	run := d.run
	if o.builtin {
		run = d.bootstrap
	}
	code, err := run(client, o, user, log, out)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("deploy: %w", ctx.Err())
		}
		return err
	}
	if code != 0 {
		err := fmt.Errorf("%w: %s exited with status %d on %s; its last lines: %s (all of it is in the log; brine cloud -v shows it)",
			ErrScriptFailed, o.scriptName, code, o.host, out.text())
		if !o.failIgnore {
			return err
		}
		log.Warn("deploy script failed; going on (deploy_fail: ignore)", "err", err)
	}
	return fire(ctx, "deploy_script", map[string]any{
		"event": fmt.Sprintf("%s has been deployed at %s", vm.Name, o.host), "name": vm.Name, "host": o.host})
}

// Forget drops the host keys trusted for node's addresses: the node is
// destroyed, and a VM made later at one of its addresses will have keys
// of its own (trusted on first use, not refused as changed). It
// implements cloud.Forgetter.
func (d *Deployer) Forget(_ context.Context, node *cloud.Node) error {
	addrs := append(append([]string(nil), node.PrivateIPs...), node.PublicIPs...)
	if len(addrs) == 0 {
		return nil
	}
	n, err := d.trust.forget(addrs)
	if err != nil {
		return err
	}
	if n > 0 {
		d.cfg.Log.Info("forgot the host keys of a destroyed VM", "vm", node.Name, "addresses", addrs, "lines", n)
	}
	return nil
}

// connect waits for the SSH port, then logs in, retrying with backoff
// until ssh_connect_timeout: a VM's sshd starts, and cloud-init installs
// its key, some time after the VM has an address. The backoff stops at 2 s
// (salt-cloud tries every second), so that a VM is deployed soon after its
// sshd starts. A changed host key is not retried.
func (d *Deployer) connect(ctx context.Context, o *options, log *slog.Logger) (*ssh.Client, string, error) {
	ctx, cancel := context.WithTimeout(ctx, o.connectTimeout)
	defer cancel()
	addr := net.JoinHostPort(o.host, strconv.Itoa(o.port))
	check := d.trust.callback(log)
	if !o.hostKeyCheck {
		check = acceptAny(log)
	}
	var auth []ssh.AuthMethod
	if o.signer != nil {
		auth = append(auth, ssh.PublicKeys(o.signer))
	}
	if pw := o.password.Reveal(); pw != "" {
		auth = append(auth, ssh.Password(pw), ssh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
			answers := make([]string, len(qs))
			for i := range answers {
				answers[i] = pw
			}
			return answers, nil
		}))
	}
	wait := 250 * time.Millisecond
	var lastErr error
	refusals := 0
	for attempt := 1; ; attempt++ {
		client, user, err := d.login(ctx, addr, o, auth, check)
		if err == nil {
			log.Info("logged in", "attempts", attempt)
			return client, user, nil
		}
		if errors.Is(err, ErrHostKeyChanged) {
			return nil, "", err
		}
		// A refused login is retried (cloud-init may not have installed
		// the key yet), but only so often: a wrong password stays wrong.
		if errors.Is(err, ErrAuth) {
			refusals++
			if refusals >= o.authTries {
				return nil, "", fmt.Errorf("%w (wait_for_passwd_maxtries %d)", err, o.authTries)
			}
		}
		// An attempt cut short by the deadline says less than the one
		// before it.
		if ctx.Err() == nil || lastErr == nil {
			if lastErr == nil || lastErr.Error() != err.Error() {
				log.Info("waiting for ssh", "err", err)
			}
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), context.Canceled) {
				return nil, "", fmt.Errorf("waiting for ssh on %s: %w", addr, ctx.Err())
			}
			return nil, "", fmt.Errorf("%s: no login within ssh_connect_timeout %s: %w", addr, o.connectTimeout, lastErr)
		case <-time.After(wait):
		}
		wait = min(wait*2, 2*time.Second)
	}
}

// login makes one attempt: connect, then each user name in turn.
func (d *Deployer) login(ctx context.Context, addr string, o *options, auth []ssh.AuthMethod, check ssh.HostKeyCallback) (*ssh.Client, string, error) {
	algs, err := d.trust.hostKeyAlgorithms(addr)
	if err != nil {
		return nil, "", err
	}
	var refused []string
	for _, user := range o.users {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
		cancel()
		if err != nil {
			return nil, "", fmt.Errorf("%w: %v", ErrUnreachable, err)
		}
		deadline := time.Now().Add(30 * time.Second)
		if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
			deadline = dl
		}
		_ = conn.SetDeadline(deadline)
		cfg := &ssh.ClientConfig{User: user, Auth: auth, HostKeyCallback: check, HostKeyAlgorithms: algs, Timeout: 10 * time.Second}
		c, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
		if err != nil {
			conn.Close()
			if errors.Is(err, ErrHostKeyChanged) {
				return nil, "", err
			}
			if strings.Contains(err.Error(), "unable to authenticate") {
				refused = append(refused, user)
				continue
			}
			return nil, "", fmt.Errorf("ssh handshake with %s: %v", addr, err)
		}
		_ = conn.SetDeadline(time.Time{})
		return ssh.NewClient(c, chans, reqs), user, nil
	}
	return nil, "", fmt.Errorf("%w for %s with %s", ErrAuth, strings.Join(refused, ", "), o.credentials())
}

// credentials names (never shows) what was offered.
func (o *options) credentials() string {
	var what []string
	if o.signer != nil {
		what = append(what, "private_key "+o.keyFile)
	}
	if o.password.Reveal() != "" {
		what = append(what, "password")
	}
	return strings.Join(what, " and ")
}

// run uploads the script to a private temporary directory, with the
// minion configuration beside it, runs it, and removes the directory
// (unless keep_tmp). It returns the script's exit status; an error means
// the script could not be run.
func (d *Deployer) run(client *ssh.Client, o *options, user string, log *slog.Logger, out *outputTail) (int, error) {
	dir, cleanup, err := d.prepare(client, o, log)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	return d.runScript(client, o, user, dir, log, out)
}

// prepare makes the private temporary directory (tmp_dir, or a new one),
// uploads the script to it as deploy.sh and the minion configuration as
// minion, and returns it with the function that removes it (which does
// nothing with keep_tmp).
func (d *Deployer) prepare(client *ssh.Client, o *options, log *slog.Logger) (string, func(), error) {
	dir := o.tmpDir
	if dir == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", nil, err
		}
		dir = "/tmp/.brine-deploy-" + hex.EncodeToString(b[:])
	}
	script := dir + "/deploy.sh"
	upload := fmt.Sprintf("umask 077 && mkdir -m 700 %s && cat > %s && chmod 700 %s", shellQuote(dir), shellQuote(script), shellQuote(script))
	if code, err := d.exec(client, o, upload, bytes.NewReader(o.script), log, "upload", nil); err != nil || code != 0 {
		if err == nil {
			err = fmt.Errorf("exit status %d (see the log)", code)
		}
		return "", nil, fmt.Errorf("uploading %s to %s:%s: %w", o.scriptPath, o.host, dir, err)
	}
	log.Info("deploy script uploaded", "script", o.scriptPath, "dir", dir)
	cleanup := func() {
		if o.keepTmp {
			log.Info("deploy directory kept (keep_tmp)", "dir", dir)
			return
		}
		if _, err := d.exec(client, o, "rm -rf "+shellQuote(dir), nil, log, "cleanup", nil); err != nil {
			log.Warn("removing the deploy directory", "dir", dir, "err", err)
		}
	}
	// salt-cloud leaves the minion's configuration beside the script, for
	// bootstrap-salt -c <tmp_dir> (or any script) to install.
	conf, err := yaml.Marshal(o.minion)
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("the minion configuration of %s: %w", o.name, err)
	}
	if err := d.put(client, o, dir+"/minion", conf, log); err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// put writes data to the private file path on the VM.
func (d *Deployer) put(client *ssh.Client, o *options, path string, data []byte, log *slog.Logger) error {
	if code, err := d.exec(client, o, fmt.Sprintf("umask 077 && cat > %s", shellQuote(path)), bytes.NewReader(data), log, "upload", nil); err != nil || code != 0 {
		if err == nil {
			err = fmt.Errorf("exit status %d (see the log)", code)
		}
		return fmt.Errorf("uploading %s to %s: %w", path, o.host, err)
	}
	return nil
}

// runScript runs dir/deploy.sh with script_args and script_env, under
// sudo when the login user is not root and sudo is on, and returns its
// exit status.
func (d *Deployer) runScript(client *ssh.Client, o *options, user, dir string, log *slog.Logger, out *outputTail) (int, error) {
	var cmd strings.Builder
	fmt.Fprintf(&cmd, "cd %s && ", shellQuote(dir))
	keys := slices.Sorted(maps.Keys(o.scriptEnv))
	for _, k := range keys {
		fmt.Fprintf(&cmd, "export %s=%s; ", k, shellQuote(o.scriptEnv[k]))
	}
	cmd.WriteString(shellQuote(dir + "/deploy.sh"))
	if o.scriptArgs != "" {
		cmd.WriteString(" " + o.scriptArgs)
	}
	command := cmd.String()
	var stdin io.Reader
	if user != "root" && o.useSudo(user) {
		if pw := o.sudoPassword.Reveal(); pw != "" {
			command = "sudo -S -p '' -- sh -c " + shellQuote(command)
			stdin = strings.NewReader(pw + "\n")
		} else {
			command = "sudo -n -- sh -c " + shellQuote(command)
		}
	}
	start := time.Now()
	log.Info("running the deploy script", "script", o.scriptName, "args", o.scriptArgs)
	code, err := d.exec(client, o, command, stdin, log, "script", out)
	if err != nil {
		return 0, fmt.Errorf("running %s on %s: %w", o.scriptName, o.host, err)
	}
	log.Info("deploy script finished", "status", code, "elapsed", time.Since(start).Round(time.Millisecond))
	return code, nil
}

// exec runs command in a session, streaming each output line to the log
// (and to Output), and returns its exit status.
func (d *Deployer) exec(client *ssh.Client, o *options, command string, stdin io.Reader, log *slog.Logger, step string, out *outputTail) (int, error) {
	sess, err := client.NewSession()
	if err != nil {
		return 0, err
	}
	defer sess.Close()
	if stdin != nil {
		sess.Stdin = stdin
	}
	var wg sync.WaitGroup
	pipes := map[string]io.Reader{}
	for stream, get := range map[string]func() (io.Reader, error){"stdout": sess.StdoutPipe, "stderr": sess.StderrPipe} {
		r, err := get()
		if err != nil {
			return 0, err
		}
		pipes[stream] = r
	}
	for stream, r := range pipes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.stream(r, o.name, o.secrets(), log, step, stream, out)
		}()
	}
	if err := sess.Start(command); err != nil {
		return 0, err
	}
	err = sess.Wait()
	wg.Wait()
	var ee *ssh.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		return ee.ExitStatus(), nil
	}
	return 0, err
}

// stream logs r line by line.
func (d *Deployer) stream(r io.Reader, vm string, secrets []string, log *slog.Logger, step, stream string, out *outputTail) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := redact(sc.Text(), secrets)
		log.Info("deploy output", "step", step, "stream", stream, "line", line)
		out.add(line)
		if d.cfg.Output != nil {
			d.outMu.Lock()
			fmt.Fprintf(d.cfg.Output, "%s: %s\n", vm, line)
			d.outMu.Unlock()
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// tailLines is how many of a failed script's last lines its error quotes.
const tailLines = 5

// outputTail keeps the last lines a script printed, for the error that
// reports its failure (which is shown, and fired in deploying/failed, where
// the log is not at hand). A nil outputTail keeps nothing.
type outputTail struct {
	mu    sync.Mutex
	lines []string
}

func (t *outputTail) add(line string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[1:]
	}
}

// text quotes the lines (already redacted as they were read).
func (t *outputTail) text() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(none)"
	}
	quoted := make([]string, len(t.lines))
	for i, l := range t.lines {
		quoted[i] = strconv.Quote(l)
	}
	return strings.Join(quoted, " | ")
}

// redact replaces each secret in line by [redacted]: a script may print a
// credential it was given, which must not reach the log or an event.
func redact(line string, secrets []string) string {
	for _, s := range secrets {
		if s != "" {
			line = strings.ReplaceAll(line, s, "[redacted]")
		}
	}
	return line
}
