package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/cli/agentcmd"
	"github.com/brinehq/brine/keys"
)

// keyFlags are salt-key's options.
type keyFlags struct {
	listAll                     bool
	list                        string
	accept, reject, del         string
	acceptAll, rejectAll        bool
	deleteAll                   bool
	pendingOlder                string
	finger, print               string
	fingerAll, printAll         bool
	yes                         bool
	includeRejected, includeAcc bool
	includeDenied, includeAll   bool
	asJSON                      bool
	out                         string
	importSalt                  string
}

// listNames are the values salt-key's -l takes.
var listNames = []string{"pre", "un", "unaccepted", "acc", "accepted", "rej", "rejected", "den", "denied", "all"}

func newKeyCmd(g *globalFlags) *cobra.Command {
	var (
		cf clientFlags
		f  keyFlags
	)
	cmd := &cobra.Command{
		Use:   "key [-L | -l STATE | -a GLOB | -A | -r GLOB | -R | -d GLOB | -D | -f GLOB | -F | -p GLOB | -P]",
		Short: "List, accept, reject and delete agent keys (like salt-key)",
		Long: `Manage the keys agents present to the master, as salt-key does: with no
option (or -L) list every key by state; -a, -r and -d accept, reject and
delete the keys a glob selects (several globs separated by commas), -A, -R
and -D every one. An accepted key lets its agent in; a pending one waits for
an operator (or autosign_file, auto_accept); a rejected one is refused; a
denied key is another key presented for an id that has one (possibly an
impostor), listed beside the id's own key.

Accept, reject and delete show the keys they will change and ask
"Proceed?" on a terminal; -y proceeds without asking, and is required when
standard input is not a terminal. Each change fires salt/key. -f and -p
print the keys' SHA-256 fingerprints and public keys: Z85 Curve25519 keys
for brine agents, RSA keys (PEM) for salt-minions, whose fingerprints are
salt-key -F's. The master's own keys are listed under "Local Keys":
master.pub is its Curve25519 key, which brine agents pin, and
master.rsa.pub its RSA key (Salt's master.pub), which a salt-minion's
master_finger must equal (brine key -f master).

--import-salt DIR records the minion keys of a Salt master's pki_dir
(DIR/minions, minions_pre, minions_rejected, minions_denied) in the same
states, so that a move keeps the accepted minions: an id that already has
another key here keeps it, a file that holds no key is reported and
skipped. It fires no salt/key.`,
		Example: `  brine key -L
  brine key -l un
  brine key -a 'web-asg-*' -y
  brine key -d web1 -y
  brine key --delete-pending-older-than 24h -y
  brine key -f web1
  brine key -f master
  brine key --import-salt /etc/salt/pki/master
  brine key -L --out json`,
		Args: rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.check(); err != nil {
				return usageError{err}
			}
			k := &keyRun{cmd: cmd, g: g, cf: &cf, f: &f, out: cmd.OutOrStdout()}
			return k.run(cmd.Context())
		},
	}
	cf.register(cmd)
	fl := cmd.Flags()
	fl.BoolVarP(&f.listAll, "list-all", "L", false, "list every key by state (the default)")
	fl.StringVarP(&f.list, "list", "l", "", "list the keys in one state: "+strings.Join(listNames, ", "))
	fl.StringVarP(&f.accept, "accept", "a", "", "accept the pending keys GLOB selects")
	fl.BoolVarP(&f.acceptAll, "accept-all", "A", false, "accept every pending key")
	fl.StringVarP(&f.reject, "reject", "r", "", "reject the pending keys GLOB selects")
	fl.BoolVarP(&f.rejectAll, "reject-all", "R", false, "reject every pending key")
	fl.StringVarP(&f.del, "delete", "d", "", "delete the keys GLOB selects, in every state")
	fl.BoolVarP(&f.deleteAll, "delete-all", "D", false, "delete every key")
	fl.StringVar(&f.pendingOlder, "delete-pending-older-than", "", "delete the pending keys that have waited AGE or longer (24h, 90m)")
	fl.StringVarP(&f.finger, "finger", "f", "", "print the fingerprints of the keys GLOB selects")
	fl.BoolVarP(&f.fingerAll, "finger-all", "F", false, "print the fingerprints of every key")
	fl.StringVarP(&f.print, "print", "p", "", "print the public keys GLOB selects")
	fl.BoolVarP(&f.printAll, "print-all", "P", false, "print every public key")
	fl.BoolVarP(&f.yes, "yes", "y", false, "accept, reject or delete without asking")
	fl.BoolVar(&f.includeRejected, "include-rejected", false, "accept: rejected keys too")
	fl.BoolVar(&f.includeAcc, "include-accepted", false, "reject: accepted keys too")
	fl.BoolVar(&f.includeDenied, "include-denied", false, "accept or reject: denied keys too (the id's first denied key replaces its key)")
	fl.BoolVar(&f.includeAll, "include-all", false, "accept: rejected keys too; reject: accepted keys too")
	fl.BoolVar(&f.asJSON, "json", false, "print the answer as JSON on one line")
	fl.StringVar(&f.out, "out", "", "output format: key (salt-key's) or json (indented, as salt-key --out json)")
	fl.StringVar(&f.importSalt, "import-salt", "", "record the minion keys of a Salt master's pki_dir DIR in their states")
	return cmd
}

// action is the one thing a command line asks: list, accept, reject,
// delete, finger or print, and its glob.
func (f *keyFlags) action() (name, match string, n int) {
	for _, a := range []struct {
		set   bool
		name  string
		match string
	}{
		{f.listAll, "list_all", ""}, {f.list != "", "list", f.list},
		{f.accept != "", "accept", f.accept}, {f.acceptAll, "accept", "*"},
		{f.reject != "", "reject", f.reject}, {f.rejectAll, "reject", "*"},
		{f.del != "", "delete", f.del}, {f.deleteAll, "delete", "*"},
		{f.pendingOlder != "", "delete", ""},
		{f.finger != "", "finger", f.finger}, {f.fingerAll, "finger", "*"},
		{f.print != "", "print", f.print}, {f.printAll, "print", "*"},
		{f.importSalt != "", "import", f.importSalt},
	} {
		if a.set {
			if n == 0 {
				name, match = a.name, a.match
			}
			n++
		}
	}
	if n == 0 {
		name = "list_all"
	}
	return name, match, n
}

func (f *keyFlags) check() error {
	if _, _, n := f.action(); n > 1 {
		return errors.New("key: give one of -L, -l, -a, -A, -r, -R, -d, -D, --delete-pending-older-than, -f, -F, -p, -P, --import-salt")
	}
	if f.pendingOlder != "" {
		if _, err := keys.ParseAge(f.pendingOlder); err != nil {
			return fmt.Errorf("key: --delete-pending-older-than: %w", err)
		}
	}
	if f.list != "" && !slices.Contains(listNames, f.list) {
		return fmt.Errorf("key: -l %q: want one of %s", f.list, strings.Join(listNames, ", "))
	}
	switch f.out {
	case "", "key", "json":
	default:
		return fmt.Errorf("key: --out %q: want key or json", f.out)
	}
	if f.asJSON && f.out == "key" {
		return errors.New("key: --json and --out key disagree")
	}
	return nil
}

// json reports whether the answer is printed as JSON, and how.
func (f *keyFlags) json() (on bool, indent string) {
	if f.out == "json" {
		return true, "    "
	}
	return f.asJSON, ""
}

// keyRun is one `brine key` invocation.
type keyRun struct {
	cmd *cobra.Command
	g   *globalFlags
	cf  *clientFlags
	f   *keyFlags
	out io.Writer
	// callFn stands in for the master in tests (nil: the master).
	callFn func(ctx context.Context, fun string, kwargs map[string]any, out any) error
}

func (k *keyRun) run(ctx context.Context) error {
	name, match, _ := k.f.action()
	switch name {
	case "list_all":
		var l keys.Listing
		if err := k.call(ctx, "key.list_all", nil, &l); err != nil {
			return err
		}
		return k.show(l)
	case "list":
		var l keys.Listing
		if err := k.call(ctx, "key.list", map[string]any{"match": match}, &l); err != nil {
			return err
		}
		return k.show(l)
	case "finger", "print":
		var m map[string]map[string]any
		if err := k.call(ctx, "key."+name, map[string]any{"match": match}, &m); err != nil {
			return err
		}
		if err := k.local(m, name, match); err != nil {
			return err
		}
		return k.show(m)
	case "import":
		return k.importSalt(ctx, match)
	}
	return k.change(ctx, name, match)
}

// local adds to salt-key's "Local Keys" the master's Curve25519 public
// key (what brine agents pin with master_finger), derived from the shared
// key this client holds, when match selects "master.pub" (or is
// "master"). The master's answer holds its RSA key (keys.LocalRSA, which
// salt-minions pin) already: the client cannot derive that one.
func (k *keyRun) local(m map[string]map[string]any, name, match string) error {
	if m == nil || !selectsLocal(match, localCurve) {
		return nil
	}
	_, _, key, err := k.cf.endpoints(k.g)
	if err != nil {
		return err
	}
	pub := gateway.MasterKeys(key).Public
	val := curve.Fingerprint(pub)
	if name == "print" {
		val = pub.String()
	}
	if m[listLocal] == nil {
		m[listLocal] = map[string]any{}
	}
	m[listLocal][localCurve] = val
	return nil
}

// selectsLocal reports whether match (globs separated by commas) selects
// the master's key file name, or is "master", as the master decides for
// its RSA key.
func selectsLocal(match, name string) bool {
	if match == "master" {
		return true
	}
	for _, g := range strings.Split(match, ",") {
		if ok, _ := path.Match(strings.TrimSpace(g), name); ok {
			return true
		}
	}
	return false
}

// localCurve is the name of the master's Curve25519 public key among the
// local keys.
const localCurve = "master.pub"

// listLocal is the list of the master's own keys in finger and print output.
const listLocal = keys.ListLocal

// change accepts, rejects or deletes as salt-key does: list what the glob
// selects in the states the command acts on, confirm, then change exactly
// the keys listed (by name, not by the glob again: a key that arrived in
// between is not changed unseen).
func (k *keyRun) change(ctx context.Context, name, match string) error {
	var found keys.Listing
	if k.f.pendingOlder != "" {
		if err := k.call(ctx, "key.pending_older_than", map[string]any{"age": k.f.pendingOlder}, &found); err != nil {
			return err
		}
	} else if err := k.call(ctx, "key.name_match", map[string]any{"match": match}, &found); err != nil {
		return err
	}
	f := k.f
	incOther := name == keys.ActAccept && (f.includeRejected || f.includeAll) ||
		name == keys.ActReject && (f.includeAcc || f.includeAll)
	from := keys.From(name, incOther, f.includeDenied)
	chosen := keys.Chosen(found, from)
	asJSON, _ := f.json()
	if len(chosen) == 0 {
		if asJSON {
			return k.show(keys.Listing{})
		}
		if k.f.pendingOlder != "" {
			_, err := fmt.Fprintf(k.out, "No unaccepted key has waited %s or longer.\n", k.f.pendingOlder)
			return err
		}
		statuses := make([]string, len(from))
		for i, st := range from {
			statuses[i] = stateWords[st]
		}
		_, err := fmt.Fprintf(k.out, "The key glob '%s' does not match any %s keys.\n", match, orList(statuses))
		return err
	}
	verb := map[string]string{"accept": "accepted", "reject": "rejected", "delete": "deleted"}[name]
	// As salt-key, the keys about to change are shown, -y or not (on
	// standard error with --json, whose output is the answer alone).
	w := k.out
	if asJSON {
		w = k.cmd.ErrOrStderr()
	}
	if _, err := fmt.Fprintf(w, "The following keys are going to be %s:\n", verb); err != nil {
		return err
	}
	if err := printKeys(w, paletteFor(w, false), chosen); err != nil {
		return err
	}
	if !f.yes {
		ok, err := k.confirm(w, name, verb, chosen)
		if err != nil || !ok {
			return err
		}
	}
	fun, kwargs := keys.DictCall(name, chosen, incOther, f.includeDenied)
	var after keys.Listing
	if err := k.call(ctx, fun, kwargs, &after); err != nil {
		return err
	}
	if name == "delete" {
		after = chosen // salt-key reports what it was asked to delete
	}
	if asJSON {
		return k.show(after)
	}
	for _, list := range slices.Sorted(maps.Keys(after)) {
		for _, id := range after[list] {
			if _, err := fmt.Fprintf(k.out, "Key for minion %s %s.\n", id, verb); err != nil {
				return err
			}
		}
	}
	return nil
}

// stateWords are salt-key's words for the states, in its messages.
var stateWords = map[keys.State]string{keys.Pending: "unaccepted", keys.Accepted: "accepted", keys.Rejected: "rejected", keys.Denied: "denied"}

// confirm asks on a terminal whether to go on, as salt-key does (accept
// and reject default to yes, delete to no). Without a terminal to ask on,
// it refuses: a script must say -y.
func (k *keyRun) confirm(w io.Writer, name, verb string, chosen keys.Listing) (bool, error) {
	in := k.cmd.InOrStdin()
	if !agentcmd.IsTerminal(in) {
		n := 0
		for _, ids := range chosen {
			n += len(ids)
		}
		return false, usageError{fmt.Errorf("key: %d key(s) not %s: standard input is not a terminal to ask \"Proceed?\" on (pass -y to proceed)", n, verb)}
	}
	return ask(in, w, name != "delete")
}

// orList is "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// call runs a key function on the master through `brine run`'s request
// and decodes its return into out.
func (k *keyRun) call(ctx context.Context, fun string, kwargs map[string]any, out any) error {
	if k.callFn != nil {
		return k.callFn(ctx, fun, kwargs, out)
	}
	return runFunction(ctx, func(ctx context.Context, method string, in, out any) error {
		return callMaster(ctx, k.g, k.cf, method, in, out)
	}, fun, kwargs, out)
}

// show prints a listing, or fingerprints or keys by list and id, as
// salt-key's key outputter or as JSON.
func (k *keyRun) show(v any) error {
	if asJSON, indent := k.f.json(); asJSON {
		b, err := json.MarshalIndent(v, "", indent)
		if indent == "" {
			b, err = json.Marshal(v)
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(k.out, "%s\n", b)
		return err
	}
	return printKeys(k.out, paletteFor(k.out, false), v)
}

// keyColours are salt-key's: a bright heading and its keys in the state's
// colour (accepted green, denied magenta, unaccepted red, rejected blue).
var keyColours = map[string]struct{ head, item string }{
	listLocal:         {"\x1b[1;35m", "\x1b[0;35m"},
	keys.ListAccepted: {"\x1b[1;32m", "\x1b[0;32m"},
	keys.ListDenied:   {"\x1b[1;35m", "\x1b[0;35m"},
	keys.ListPending:  {"\x1b[1;31m", "\x1b[0;31m"},
	keys.ListRejected: {"\x1b[1;34m", "\x1b[0;34m"},
}

// keyHeadings are salt-key's headings of the lists.
var keyHeadings = map[string]string{
	listLocal:         "Local Keys:",
	keys.ListAccepted: "Accepted Keys:",
	keys.ListDenied:   "Denied Keys:",
	keys.ListPending:  "Unaccepted Keys:",
	keys.ListRejected: "Rejected Keys:",
}

// printKeys writes v as salt-key's key outputter does: each list present,
// in the order of its name (accepted, denied, unaccepted, rejected), under
// its heading; ids one a line, or "id:  value" for fingerprints and keys
// (one line per denied key).
func printKeys(w io.Writer, pal palette, v any) error {
	var b strings.Builder
	paint := func(code, s string) string {
		if !pal.on {
			return s
		}
		return code + s + reset
	}
	section := func(list string, lines []string) {
		c := keyColours[list]
		b.WriteString(paint(c.head, keyHeadings[list]) + "\n")
		for _, l := range lines {
			b.WriteString(paint(c.item, l) + "\n")
		}
	}
	switch t := v.(type) {
	case keys.Listing:
		for _, list := range slices.Sorted(maps.Keys(t)) {
			section(list, t[list])
		}
	case map[string]map[string]any:
		for _, list := range slices.Sorted(maps.Keys(t)) {
			var lines []string
			ids := slices.Collect(maps.Keys(t[list]))
			slices.SortFunc(ids, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
			for _, id := range ids {
				switch val := t[list][id].(type) {
				case []any:
					for _, x := range val {
						lines = append(lines, fmt.Sprintf("%s:  %v", id, x))
					}
				default:
					lines = append(lines, fmt.Sprintf("%s:  %v", id, val))
				}
			}
			section(list, lines)
		}
	default:
		return fmt.Errorf("key: cannot print %T", v)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// importBatch bounds the keys sent in one key.import request: 200 RSA
// keys are about 90 KB, well under the bus's message size.
const importBatch = 200

// importSalt records the minion keys of a Salt master's pki_dir through
// the master (key.import), in requests of importBatch keys, and prints
// what it did: the files read wrong and the keys the master kept its own
// for are listed, and make the command fail after the others are
// recorded. An import stopped by an error may be run again: the keys
// already recorded are unchanged.
func (k *keyRun) importSalt(ctx context.Context, dir string) error {
	pki, bad, err := keys.ReadSaltPKI(dir)
	if err != nil {
		return err
	}
	res := keys.ImportResult{Imported: keys.Listing{}, Unchanged: keys.Listing{}, Skipped: []string{}}
	for _, e := range bad {
		res.Skipped = append(res.Skipped, e.Error())
	}
	var callErr error
	for _, batch := range pki.Batches(importBatch) {
		var part keys.ImportResult
		if callErr = k.call(ctx, "key.import", map[string]any{"keys": batch}, &part); callErr != nil {
			break
		}
		res.Merge(part)
	}
	if err := k.showImport(dir, pki.Len(), res); err != nil {
		return err
	}
	if callErr != nil {
		return fmt.Errorf("key: --import-salt stopped (running it again keeps what is recorded): %w", callErr)
	}
	if n := len(res.Skipped); n > 0 {
		return fmt.Errorf("key: --import-salt: %d key(s) or file(s) of %s skipped (listed above); the others are recorded", n, dir)
	}
	return nil
}

// showImport prints an import's result as salt-key's messages, or JSON.
func (k *keyRun) showImport(dir string, read int, res keys.ImportResult) error {
	if asJSON, _ := k.f.json(); asJSON {
		return k.show(res)
	}
	var b strings.Builder
	if read == 0 && len(res.Skipped) == 0 {
		fmt.Fprintf(&b, "No minion keys in %s.\n", dir)
	}
	for _, list := range slices.Sorted(maps.Keys(res.Imported)) {
		for _, id := range res.Imported[list] {
			fmt.Fprintf(&b, "Key for minion %s imported as %s.\n", id, stateWords[keys.ListState(list)])
		}
	}
	for _, list := range slices.Sorted(maps.Keys(res.Unchanged)) {
		for _, id := range res.Unchanged[list] {
			fmt.Fprintf(&b, "Key for minion %s already recorded: unchanged.\n", id)
		}
	}
	for _, why := range res.Skipped {
		fmt.Fprintf(&b, "Skipped %s\n", why)
	}
	_, err := io.WriteString(k.out, b.String())
	return err
}
