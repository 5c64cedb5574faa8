package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Problem is a configuration key brine does not know, where it was set.
type Problem struct {
	File string
	Line int
	// Key is the key as written, with its section ("dnsmasq: pidfle").
	Key string
	// Suggestion is the known key it probably means ("" when none is close).
	Suggestion string
	// Salt is set for a key of Salt's master that brine does not use.
	Salt bool
}

func (p Problem) String() string {
	where := p.File
	if p.Line > 0 {
		where += ":" + strconv.Itoa(p.Line)
	}
	switch {
	case p.Salt:
		return fmt.Sprintf("%s: %s is a Salt option brine does not use (ignored)", where, p.Key)
	case p.Suggestion != "":
		return fmt.Sprintf("%s: unknown key %s (did you mean %q?)", where, p.Key, p.Suggestion)
	}
	return fmt.Sprintf("%s: unknown key %s", where, p.Key)
}

// Error is the problem as an error.
func (p Problem) Error() string { return p.String() }

// Strict is the refusal of a configuration with problems (strict mode):
// nil when there are none, else one error listing them all.
func Strict(problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.String()
	}
	return fmt.Errorf("strict: the configuration has keys brine does not use:\n  %s", strings.Join(msgs, "\n  "))
}

// Unknown reports every top-level key set in any file that is not in
// known: with file, line and the known key it probably means. Keys of
// Salt's master that brine does not implement are reported as such.
func (m *Master) Unknown(known []string) []Problem {
	return m.Tree.Unknown(known, saltMasterKeys)
}

func checkKeys(keys map[string]source, known []string, path []string) error {
	if len(path) == 0 {
		return nil
	}
	src, ok := keys[path[0]]
	if !ok {
		return nil
	}
	for _, n := range descend([]ast.Node{src.node}, path[1:]) {
		pairs, ok := Pairs(n)
		if !ok {
			continue
		}
		for _, kv := range pairs {
			k := Key(kv.Key)
			if slices.Contains(known, k) {
				continue
			}
			return Problem{File: src.file, Line: nodeLine(kv.Key), Key: fmt.Sprintf("%s: %q", strings.Join(path, "."), k),
				Suggestion: Closest(k, known)}
		}
	}
	return nil
}

// descend follows path (keys, or "*" for every child) from nodes.
func descend(nodes []ast.Node, path []string) []ast.Node {
	for _, step := range path {
		var next []ast.Node
		for _, n := range nodes {
			if seq, ok := n.(*ast.SequenceNode); ok && step == "*" {
				next = append(next, seq.Values...)
				continue
			}
			pairs, _ := Pairs(n)
			for _, kv := range pairs {
				if step == "*" || Key(kv.Key) == step {
					next = append(next, kv.Value)
				}
			}
		}
		nodes = next
	}
	return nodes
}

func nodeLine(n ast.Node) int {
	if n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

// Closest returns the candidate nearest to s by edit distance, if it is
// near enough to be a typo (at most a third of its length, and 3), else "".
func Closest(s string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := distance(strings.ToLower(s), strings.ToLower(c))
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > 3 || bestD*3 > max(len(s), len(best)) {
		return ""
	}
	return best
}

// distance is the Damerau–Levenshtein (optimal string alignment) distance:
// a swapped pair of letters is one typo.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// saltMasterKeys are options of Salt's master that brine does not use: a
// Salt master configuration brought unchanged loads, and they are reported
// as ignored rather than as typos.
var saltMasterKeys = []string{
	"autosign_timeout", "cachedir", "conf_file",
	"enable_gpu_grains", "event_return", "ext_pillar", "fileserver_backend", "gather_job_timeout",
	"gitfs_remotes", "hash_type", "ipv6", "job_cache", "keep_acl_in_token", "key_logfile", "log_datefmt", "log_file",
	"log_level_logfile", "master_id", "master_job_cache", "master_tops", "max_open_files",
	"minion_data_cache", "nodegroups", "open_mode", "order_masters", "peer", "peer_run", "pidfile", "pillar_opts",
	"pillar_roots", "pillar_source_merging_strategy", "pki_dir", "publisher_acl", "reactor_niceness",
	"reactor_refresh_interval", "reactor_worker_hwm", "runner_dirs", "sock_dir", "state_aggregate",
	"state_output", "state_top", "state_verbose", "syndic_master", "tcp_keepalive", "timeout",
	"transport", "top_file_merging_strategy", "user", "worker_threads", "zmq_backlog", "default_top",
	"env_order", "event_match_type", "failhard", "jinja_env", "jinja_sls_env", "jinja_trim_blocks", "jinja_lstrip_blocks",
	"master_roots", "root_dir", "extension_modules", "module_dirs", "cli_summary", "color", "output", "show_jid", "show_timeout",
}

// YAMLKeys lists the yaml names of a struct's fields (inline fields
// included): the keys a section decoded into it may have.
func YAMLKeys(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-":
		case strings.Contains(opts, "inline"):
			out = append(out, YAMLKeys(reflect.New(f.Type).Interface())...)
		case name != "":
			out = append(out, name)
		}
	}
	return out
}

// CoreKeys are the top-level keys of Settings.
func CoreKeys() []string { return YAMLKeys(Settings{}) }
