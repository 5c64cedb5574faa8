package keys

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SaltPKI are the minion keys of a Salt master's pki_dir: the key text by
// list name (ListAccepted…, Salt's subdirectory names) and minion id.
type SaltPKI map[string]map[string]string

// Len is the number of keys.
func (p SaltPKI) Len() int {
	n := 0
	for _, ids := range p {
		n += len(ids)
	}
	return n
}

// importOrder is the order keys are recorded in: an id's own key before
// its denied ones, so that a denied key is recorded beside it.
var importOrder = []string{ListAccepted, ListPending, ListRejected, ListDenied}

// maxKeyFile bounds what is read of a key file: a 16384-bit RSA public key
// in PEM is under 3 KiB, so a larger file is no key.
const maxKeyFile = 16 << 10

// ReadSaltPKI reads the minion keys of a Salt master's pki_dir (on a Salt
// master, /etc/salt/pki/master): one file per minion id, holding its
// public key, in dir/minions, minions_pre, minions_rejected and
// minions_denied. As salt-key, it ignores files whose name starts with a
// dot. A file whose name is no valid id, that cannot be read or holds no
// valid public key is reported in skipped, by path, and the others are
// read all the same. The error is for a dir that is no pki_dir at all.
func ReadSaltPKI(dir string) (keys SaltPKI, skipped []error, err error) {
	keys = SaltPKI{}
	found := 0
	for _, list := range importOrder {
		sub := filepath.Join(dir, list)
		entries, err := os.ReadDir(sub)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("keys: Salt pki_dir: %w", err)
		}
		found++
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			path := filepath.Join(sub, e.Name())
			pub, err := readKeyFile(path, e.Name())
			if err != nil {
				skipped = append(skipped, fmt.Errorf("%s: %w", path, err))
				continue
			}
			if keys[list] == nil {
				keys[list] = map[string]string{}
			}
			keys[list][e.Name()] = pub
		}
	}
	if found == 0 {
		return nil, nil, fmt.Errorf("keys: %s holds none of %s: not a Salt master's pki_dir (such as /etc/salt/pki/master)",
			dir, strings.Join(importOrder, ", "))
	}
	return keys, skipped, nil
}

// readKeyFile reads the key of minion id from path, normalised.
func readKeyFile(path, id string) (string, error) {
	if err := validateID(id); err != nil {
		return "", fmt.Errorf("not a minion id: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", errors.New("not a key file (a directory or a special file)")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxKeyFile {
		return "", fmt.Errorf("larger than %d bytes: not a public key", maxKeyFile)
	}
	pub := NormalizePub(string(b))
	if err := ValidatePub(pub); err != nil {
		return "", err
	}
	return pub, nil
}

// ImportResult is what Import did, by list name as the keys were given.
type ImportResult struct {
	// Imported are the keys recorded.
	Imported Listing `json:"imported"`
	// Unchanged are the keys brine held already (in whatever state it
	// holds them: its decision is newer than the Salt master's).
	Unchanged Listing `json:"unchanged"`
	// Skipped say which keys were left out and why, one a line.
	Skipped []string `json:"skipped"`
}

// Merge adds o's keys to r's, for an import made in several calls.
func (r *ImportResult) Merge(o ImportResult) {
	for _, dst := range []struct{ to, from *Listing }{{&r.Imported, &o.Imported}, {&r.Unchanged, &o.Unchanged}} {
		if *dst.to == nil {
			*dst.to = Listing{}
		}
		for list, ids := range *dst.from {
			(*dst.to)[list] = append((*dst.to)[list], ids...)
		}
	}
	r.Skipped = append(r.Skipped, o.Skipped...)
}

// Import records the keys of a Salt master (ReadSaltPKI) in their states,
// so that a shop moving to brine keeps its accepted minions: an id brine
// has no key for gets the key in its Salt state, and a key of
// minions_denied is recorded as denied beside the id's key. An id brine
// holds another key for keeps it (the key is skipped: `brine key -d` it
// first to take Salt's), and one holding the same key keeps its state. As
// AcceptKey, no salt/key event is fired: a move is not an operator's
// decision on each key, and reactions to salt/key must not run once per
// imported minion. A key that cannot be recorded is skipped, the others
// recorded all the same.
func (s *Store) Import(ctx context.Context, keys SaltPKI) (ImportResult, error) {
	res := ImportResult{Imported: Listing{}, Unchanged: Listing{}, Skipped: []string{}}
	for list := range keys {
		if ListState(list) == "" {
			return res, fmt.Errorf("keys: import: no key list %q (want %s)", list, strings.Join(importOrder, ", "))
		}
	}
	for _, list := range importOrder {
		ids := make([]string, 0, len(keys[list]))
		for id := range keys[list] {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, compareIDs)
		for _, id := range ids {
			done, why, err := s.importKey(ctx, ListState(list), id, keys[list][id])
			switch {
			case err != nil:
				if ctx.Err() != nil {
					return res, err
				}
				res.Skipped = append(res.Skipped, fmt.Sprintf("%s/%s: %v", list, id, err))
			case why != "":
				res.Skipped = append(res.Skipped, fmt.Sprintf("%s/%s: %s", list, id, why))
			case done:
				res.Imported[list] = append(res.Imported[list], id)
				s.log.Info("keys: key imported from Salt", "id", id, "list", list)
			default:
				res.Unchanged[list] = append(res.Unchanged[list], id)
			}
		}
	}
	return res, nil
}

// importKey records pub as id's key in state st (Denied: as a denied key):
// done when it was recorded, why when it was left out, neither when brine
// held it already.
func (s *Store) importKey(ctx context.Context, st State, id, pub string) (done bool, why string, err error) {
	if err := validateID(id); err != nil {
		return false, "", err
	}
	pub = NormalizePub(pub)
	if err := ValidatePub(pub); err != nil {
		return false, "", err
	}
	_, err = s.update(ctx, id, func(cur *Key) (*Key, error) {
		done, why = false, ""
		if cur == nil {
			cur = &Key{}
		}
		switch {
		case st == Denied:
			if cur.Pub == pub || slices.Contains(cur.Denied, pub) {
				return nil, nil
			}
			cur.Denied = append(cur.Denied, pub)
		case cur.State == "":
			cur.State, cur.Pub = st, pub
			cur.Denied = slices.DeleteFunc(cur.Denied, func(d string) bool { return d == pub })
		case cur.Pub == pub:
			return nil, nil
		default:
			why = fmt.Sprintf("brine holds another key for %s (%s): kept; `brine key -d %s` first to take Salt's", id, cur.State, id)
			return nil, nil
		}
		done = true
		return cur, nil
	})
	return done, why, err
}

// saltPKI reads key.import's keys argument: list name to id to key text.
func saltPKI(m map[string]any) (SaltPKI, error) {
	out := SaltPKI{}
	for list, v := range m {
		if ListState(list) == "" {
			return nil, fmt.Errorf("keys: no key list %q (want %s)", list, strings.Join(importOrder, ", "))
		}
		ids, ok := v.(map[string]any)
		if !ok && v != nil {
			return nil, fmt.Errorf("keys: %s: want keys by minion id, got %v", list, v)
		}
		out[list] = map[string]string{}
		for id, x := range ids {
			pub, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("keys: %s/%s: want the key's text, got %v", list, id, x)
			}
			out[list][id] = pub
		}
	}
	return out, nil
}

// Batches splits the keys into parts of at most n keys, in the order
// Import records them (an id's own key in a part before its denied key),
// so that a large pki_dir goes to the master in requests of bounded size.
func (p SaltPKI) Batches(n int) []SaltPKI {
	var out []SaltPKI
	cur, size := SaltPKI{}, 0
	for _, list := range importOrder {
		ids := make([]string, 0, len(p[list]))
		for id := range p[list] {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, compareIDs)
		for _, id := range ids {
			if size == n {
				out, cur, size = append(out, cur), SaltPKI{}, 0
			}
			if cur[list] == nil {
				cur[list] = map[string]string{}
			}
			cur[list][id] = p[list][id]
			size++
		}
	}
	if size > 0 {
		out = append(out, cur)
	}
	return out
}
