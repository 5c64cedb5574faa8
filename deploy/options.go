package deploy

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/brinehq/brine/cloud"
)

// Defaults, salt-cloud's where it has one.
const (
	// DefaultConnectTimeout is salt-cloud's ssh_connect_timeout.
	DefaultConnectTimeout = 900 * time.Second
	// DefaultPort is ssh_port's default.
	DefaultPort = 22
	// DefaultAuthTries is salt-cloud's wait_for_passwd_maxtries: how many
	// refused logins end the wait for SSH.
	DefaultAuthTries = 15
)

// ec2Users are the user names salt-cloud tries on EC2 when ssh_username is
// not set: each AMI family has its own.
var ec2Users = []string{"ec2-user", "centos", "ubuntu", "admin", "bitnami", "root"}

// options are the deploy settings of one VM.
type options struct {
	name           string
	host           string
	port           int
	users          []string
	password       cloud.Secret
	keyFile        string
	signer         ssh.Signer
	connectTimeout time.Duration
	authTries      int
	hostKeyCheck   bool
	scriptName     string
	scriptPath     string
	script         []byte
	scriptArgs     string
	scriptEnv      map[string]string
	sudo           bool
	// sudoSet: sudo was given; unset, it is on for users other than root
	// (salt-cloud's default).
	sudoSet      bool
	sudoPassword cloud.Secret
	// builtin: no script (or script: bootstrap-brine), the built-in
	// bootstrap, which takes its agent binary from agentDirs.
	builtin    bool
	agentDirs  []string
	tmpDir     string
	keepTmp    bool
	failIgnore bool
	// ignored are warnings about settings the built-in bootstrap does not
	// use.
	ignored []string
	// minion is the agent configuration written to <tmp_dir>/minion
	// before the script runs, as salt-cloud uploads the minion's config
	// for bootstrap-salt -c <tmp_dir> to install.
	minion map[string]any
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseOptions reads vm's deploy settings; errors name file, line and key.
func parseOptions(vm *cloud.VM, node *cloud.Node, scriptDirs, agentDirs []string) (*options, error) {
	s := vm.Settings
	o := &options{name: vm.Name, port: DefaultPort, hostKeyCheck: true, authTries: DefaultAuthTries, scriptEnv: map[string]string{}}
	var err error
	if o.scriptName, err = s.String("script"); err != nil {
		return nil, err
	}
	if o.scriptName == "" || o.scriptName == BuiltinScript {
		o.builtin, o.scriptName, o.scriptPath, o.script = true, BuiltinScript, BuiltinScript+" (built in)", bootstrapScript
		if o.agentDirs, err = dirList(s, "agent_binaries"); err != nil {
			return nil, err
		}
		o.agentDirs = append(o.agentDirs, agentDirs...)
	} else {
		if o.scriptPath, err = findScript(o.scriptName, scriptDirs); err != nil {
			return nil, s["script"].Errorf("%v", err)
		}
		if o.script, err = os.ReadFile(o.scriptPath); err != nil {
			return nil, s["script"].Errorf("%v", err)
		}
	}
	if o.host, err = sshHost(vm, node); err != nil {
		return nil, err
	}
	if err := s.Decode("ssh_port", &o.port); err != nil {
		return nil, err
	}
	if o.port < 1 || o.port > 65535 {
		return nil, s["ssh_port"].Errorf("%d is not a port", o.port)
	}
	if o.users, err = usernames(s, vm.Provider.Driver); err != nil {
		return nil, err
	}
	if o.password, err = s.Secret("password"); err != nil {
		return nil, err
	}
	if o.sudoPassword, err = s.Secret("sudo_password"); err != nil {
		return nil, err
	}
	if o.keyFile, err = s.String("private_key"); err != nil {
		return nil, err
	}
	if o.keyFile != "" {
		if o.signer, err = loadKey(o.keyFile); err != nil {
			return nil, s["private_key"].Errorf("%v", err)
		}
	}
	if o.builtin && !s.Has("script") && o.signer == nil && (o.password.Reveal() == "" || providerOnly(vm, "password")) {
		// A profile that names no script and no credential most likely
		// wants no deploy (it was skipped before brine had a bootstrap
		// of its own): it is skipped, with a warning saying how to have
		// either, where salt-cloud stops. A provider's password is the
		// cloud account's (vCenter's), not a login to its VMs: salt-cloud
		// would try it over SSH, for ssh_connect_timeout.
		return nil, fmt.Errorf("%w: no script, and no private_key or password (in the profile) for the built-in bootstrap (%s) to log in with: set one, or deploy: False", cloud.ErrDeploySkipped, BuiltinScript)
	}
	if o.signer == nil && o.password.Reveal() == "" {
		return nil, fmt.Errorf("%w: %s:%d: profile %s: deploying needs private_key or password to log in with", cloud.ErrConfig, vm.Profile.File, vm.Profile.Line, vm.Profile.Name)
	}
	secs := DefaultConnectTimeout.Seconds()
	if err := s.Decode("ssh_connect_timeout", &secs); err != nil {
		return nil, err
	}
	if secs <= 0 {
		return nil, s["ssh_connect_timeout"].Errorf("must be a positive number of seconds")
	}
	o.connectTimeout = time.Duration(secs * float64(time.Second))
	if err := s.Decode("wait_for_passwd_maxtries", &o.authTries); err != nil {
		return nil, err
	}
	if o.authTries < 1 {
		return nil, s["wait_for_passwd_maxtries"].Errorf("must be at least 1")
	}
	if o.hostKeyCheck, err = s.Bool("ssh_host_key_check", true); err != nil {
		return nil, err
	}
	if o.scriptArgs, err = scriptArgs(s); err != nil {
		return nil, err
	}
	if err := s.Decode("script_env", &o.scriptEnv); err != nil {
		return nil, err
	}
	for k := range o.scriptEnv {
		if !envName.MatchString(k) {
			return nil, s["script_env"].Errorf("%q is not an environment variable name", k)
		}
	}
	if o.sudo, err = s.Bool("sudo", false); err != nil {
		return nil, err
	}
	o.sudoSet = s.Has("sudo")
	if o.tmpDir, err = s.String("tmp_dir"); err != nil {
		return nil, err
	}
	if o.keepTmp, err = s.Bool("keep_tmp", false); err != nil {
		return nil, err
	}
	if o.minion, err = minionConfig(vm.Name, s); err != nil {
		return nil, err
	}
	fail, err := s.String("deploy_fail")
	if err != nil {
		return nil, err
	}
	switch fail {
	case "", "fail":
	case "ignore":
		o.failIgnore = true
	default:
		return nil, s["deploy_fail"].Errorf("%q: want fail or ignore", fail)
	}
	if o.builtin {
		// The built-in bootstrap takes neither: say so rather than
		// drop them silently (a profile written for bootstrap-salt
		// may pass it -P or a version).
		for _, k := range []string{"script_args", "script_env"} {
			if s.Has(k) {
				o.ignored = append(o.ignored, s[k].Where()+": "+k+" is ignored: the built-in bootstrap ("+BuiltinScript+") takes none")
			}
		}
		o.scriptArgs, o.scriptEnv = "", map[string]string{}
	}
	return o, nil
}

// providerOnly reports whether vm's key is its provider's, set neither
// by the profile nor by the map.
func providerOnly(vm *cloud.VM, key string) bool {
	p, ok := vm.Provider.Settings[key]
	return ok && vm.Settings[key].Node == p.Node
}

// useSudo reports whether the script runs under sudo when logged in as
// user: as sudo says, or, unset, for any user but root (salt-cloud's
// default).
func (o *options) useSudo(user string) bool {
	if o.sudoSet {
		return o.sudo
	}
	return user != "root"
}

// dirList reads key, a directory or a list of directories; a relative one
// is taken from the directory of the file that sets it.
func dirList(s cloud.Settings, key string) ([]string, error) {
	var v any
	if err := s.Decode(key, &v); err != nil {
		return nil, err
	}
	var dirs []string
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		dirs = []string{t}
	case []any:
		for _, d := range t {
			str, ok := d.(string)
			if !ok {
				return nil, s[key].Errorf("want a directory or a list of directories")
			}
			dirs = append(dirs, str)
		}
	default:
		return nil, s[key].Errorf("want a directory or a list of directories")
	}
	for i, d := range dirs {
		if d == "" {
			return nil, s[key].Errorf("an empty directory name")
		}
		if !filepath.IsAbs(d) {
			dirs[i] = filepath.Join(filepath.Dir(s[key].File), d)
		}
	}
	return dirs, nil
}

// minionConfig is salt-cloud's minion_config: master "salt" and the VM's
// name as id, under the profile's minion settings (which may override
// both), with the profile's grains merged into the minion's grains.
func minionConfig(name string, s cloud.Settings) (map[string]any, error) {
	conf := map[string]any{"master": "salt", "id": name}
	var minion map[string]any
	if err := s.Decode("minion", &minion); err != nil {
		return nil, s["minion"].Errorf("a mapping of agent settings: %v", err)
	}
	maps.Copy(conf, minion)
	var grains map[string]any
	if err := s.Decode("grains", &grains); err != nil {
		return nil, s["grains"].Errorf("a mapping of grains: %v", err)
	}
	if len(grains) > 0 {
		merged, ok := conf["grains"].(map[string]any)
		if conf["grains"] != nil && !ok {
			return nil, s["minion"].Errorf("grains: a mapping, not %T", conf["grains"])
		}
		merged = maps.Clone(merged)
		if merged == nil {
			merged = map[string]any{}
		}
		maps.Copy(merged, grains)
		conf["grains"] = merged
	}
	if id, ok := conf["id"].(string); !ok || id == "" {
		return nil, s["minion"].Errorf("id: a non-empty string, not %v", conf["id"])
	}
	return conf, nil
}

// findScript resolves script: a path to a file, or a name (with or
// without .sh) in one of dirs.
func findScript(script string, dirs []string) (string, error) {
	if strings.ContainsRune(script, filepath.Separator) {
		if _, err := os.Stat(script); err != nil {
			return "", err
		}
		return script, nil
	}
	for _, d := range dirs {
		for _, name := range []string{script, script + ".sh"} {
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("no deploy script %q in %s", script, strings.Join(dirs, ", "))
}

// sshHost is the address to connect to (cloud.SSHHost, which
// waiting_for_ssh announced), once ssh_interface is checked: it must be
// public_ips or private_ips, and the node must have such an address.
func sshHost(vm *cloud.VM, node *cloud.Node) (string, error) {
	iface, err := vm.Settings.String("ssh_interface")
	if err != nil {
		return "", err
	}
	var ips []string
	switch iface {
	case "":
		iface, ips = "addresses", []string{node.IP()}
	case "public_ips":
		ips = node.PublicIPs
	case "private_ips":
		ips = node.PrivateIPs
	default:
		return "", vm.Settings["ssh_interface"].Errorf("%q: want public_ips or private_ips", iface)
	}
	if len(ips) == 0 || ips[0] == "" {
		return "", fmt.Errorf("node %s has no %s to connect to", node.Name, iface)
	}
	return cloud.SSHHost(vm, node), nil
}

// usernames reads ssh_username, a name or a list of names to try in order.
func usernames(s cloud.Settings, driver string) ([]string, error) {
	var v any
	if err := s.Decode("ssh_username", &v); err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case nil:
		if driver == "ec2" {
			return ec2Users, nil
		}
		return []string{"root"}, nil
	case string:
		if t != "" {
			return []string{t}, nil
		}
	case []any:
		var out []string
		for _, u := range t {
			name, ok := u.(string)
			if !ok || name == "" {
				return nil, s["ssh_username"].Errorf("want a user name or a list of user names")
			}
			out = append(out, name)
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, s["ssh_username"].Errorf("want a user name or a list of user names")
}

// scriptArgs reads script_args: a string passed to the remote shell as
// written (as salt-cloud does), or a list of words, each quoted.
func scriptArgs(s cloud.Settings) (string, error) {
	var v any
	if err := s.Decode("script_args", &v); err != nil {
		return "", err
	}
	switch t := v.(type) {
	case nil:
		return "", nil
	case []any:
		words := make([]string, len(t))
		for i, w := range t {
			words[i] = shellQuote(fmt.Sprint(w))
		}
		return strings.Join(words, " "), nil
	default:
		return fmt.Sprint(t), nil
	}
}

// loadKey reads a private key file, which must be private (salt-cloud
// refuses one others can read, as ssh does).
func loadKey(path string) (ssh.Signer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s is readable by others (mode %04o): chmod 600 it", path, st.Mode().Perm())
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		var pp *ssh.PassphraseMissingError
		if errors.As(err, &pp) {
			return nil, fmt.Errorf("%s is protected by a passphrase, which brine cannot ask for", path)
		}
		return nil, fmt.Errorf("%s: not a private key brine can read", path)
	}
	return signer, nil
}

// kwargs are the deploying event's kwargs (salt-cloud's deploy kwargs):
// no password, no key material, and script_env values only for names
// that do not look like credentials.
func (o *options) kwargs() map[string]any {
	env := map[string]any{}
	for k, v := range o.scriptEnv {
		if cloud.IsSecretKey(k) {
			v = "[redacted]"
		}
		env[k] = v
	}
	return map[string]any{
		"name": o.name, "host": o.host, "port": o.port, "username": o.users[0], "usernames": o.users,
		"key_filename": o.keyFile, "script": o.scriptName, "script_args": o.scriptArgs, "script_env": env,
		"sudo": o.useSudo(o.users[0]), "tmp_dir": o.tmpDir, "keep_tmp": o.keepTmp, "host_key_check": o.hostKeyCheck,
		"display_ssh_output": true, "minion_conf": o.minion,
	}
}

// secrets are the values that must not be quoted from the script's output:
// the passwords and the script_env values of credential-like names.
func (o *options) secrets() []string {
	out := []string{o.password.Reveal(), o.sudoPassword.Reveal()}
	for k, v := range o.scriptEnv {
		if cloud.IsSecretKey(k) {
			out = append(out, v)
		}
	}
	return out
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
