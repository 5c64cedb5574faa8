package saltmaster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/saltproto"
	"github.com/brinehq/brine/wire"
)

// A salt-minion learns that its master restarted only when a publish or
// a reply does not decrypt: until then it neither signs in again nor says
// it is there. A Salt master with a fresh session key still reaches it
// (the minion signs in on the first publish it cannot open and then runs
// it); a brine master, which publishes only to minions it knows, would
// find none. So the session key and who held it are kept in
// Config.StateFile (mode 0600, beside master.pem, which it is no more
// secret than) and taken up again on start: the minions go on as if the
// master had not stopped, and none of them signs in again — where a Salt
// master's restart makes the whole fleet sign in at once.

// saved is what StateFile holds.
type saved struct {
	AES     string        `json:"aes"`
	Minions []savedMinion `json:"minions"`
}

type savedMinion struct {
	ID     string   `json:"id"`
	Pub    string   `json:"pub"`
	Host   string   `json:"host"`
	Proven []string `json:"proven,omitempty"`
}

// load reads StateFile: the session key (with serials going on above any
// sent before), and the sessions Run restores. A missing file is a first
// start.
func (t *Transport) load() error {
	if t.cfg.StateFile == "" {
		return nil
	}
	b, err := os.ReadFile(t.cfg.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("salt sessions: %w", err)
	}
	var s saved
	if err := json.Unmarshal(b, &s); err != nil {
		// A damaged file costs each minion one sign-in, not the master.
		t.log.Warn("salt sessions not restored: the file is damaged; minions sign in again", "file", t.cfg.StateFile, "err", err)
		return nil
	}
	c, err := saltproto.NewCrypticle(s.AES)
	if err != nil {
		t.log.Warn("salt sessions not restored: bad session key; minions sign in again", "file", t.cfg.StateFile, "err", err)
		return nil
	}
	t.session = c
	t.serial.ResetTo(time.Now().UnixMicro())
	t.restore = s.Minions
	return nil
}

// restoreSessions takes up the saved sessions whose key is still
// accepted: the master's hello for each, as a brine agent says hello when
// it reconnects.
func (t *Transport) restoreSessions(ctx context.Context) {
	n := 0
	for _, s := range t.restore {
		rsaPub, err := saltproto.ParsePublicKey(s.Pub)
		if err != nil {
			continue
		}
		m := &minion{t: t, id: s.ID, pub: s.Pub, rsaPub: rsaPub, host: s.Host, remote: s.Host, seen: time.Now(),
			proven: map[string]bool{}}
		for _, h := range s.Proven {
			m.proven[h] = true
		}
		out, err := t.call(ctx, m, wire.MethodHello, wire.Hello{ID: s.ID, Version: "salt"})
		var h wire.HelloReply
		if err != nil || convert(out, &h) != nil || h.State != wire.StateAccepted {
			t.gone(m)
			continue
		}
		t.keep(m)
		n++
	}
	t.restore = nil
	if n > 0 {
		t.log.Info("salt-minion sessions restored", "minions", n)
	}
}

// save writes StateFile when the sessions changed since the last write.
func (t *Transport) save() {
	if t.cfg.StateFile == "" || !t.dirty.Swap(false) {
		return
	}
	t.mu.Lock()
	s := saved{AES: t.session.KeyString()}
	for _, id := range slices.Sorted(maps.Keys(t.minions)) {
		m := t.minions[id]
		m.mu.Lock()
		s.Minions = append(s.Minions, savedMinion{ID: id, Pub: m.pub, Host: m.host, Proven: slices.Sorted(maps.Keys(m.proven))})
		m.mu.Unlock()
	}
	t.mu.Unlock()
	b, err := json.Marshal(s)
	if err == nil {
		err = atomicfile.WriteBytes(t.cfg.StateFile, b, 0o600)
	}
	if err != nil {
		t.dirty.Store(true)
		t.log.Error("saving salt-minion sessions", "file", t.cfg.StateFile, "err", err)
	}
}
