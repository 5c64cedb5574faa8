package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/internal/atomicfile"
)

// ErrQueueFull is returned when the outbox holds event_queue_max items.
var ErrQueueFull = errors.New("event queue full")

// Item is one message waiting for the master: an event or a job return.
// Its ID is fixed when it is queued, so that a copy re-sent after a lost
// acknowledgement is stored once by the master.
type Item struct {
	ID   string          `json:"id"`
	Kind string          `json:"kind"` // "event" or "return"
	Tag  string          `json:"tag,omitempty"`
	Body json.RawMessage `json:"body"`
	Time time.Time       `json:"time"`
}

// Outbox is the agent's on-disk queue of messages for the master: one file
// per item, written aside, synced and renamed into place, removed once the
// master acknowledged it. Several processes may use one outbox (the daemon
// and `brine call`); names sort in the order items were queued.
type Outbox struct {
	dir string
	max int

	mu   sync.Mutex
	last int64
	kick chan struct{}
}

// OpenOutbox opens (creating) the queue directory dir.
func OpenOutbox(dir string, max int) (*Outbox, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("event queue: %w", err)
	}
	return &Outbox{dir: dir, max: max, kick: make(chan struct{}, 1)}, nil
}

// Kicked is signalled when an item is queued by this process.
func (o *Outbox) Kicked() <-chan struct{} { return o.kick }

// Put stores it durably before returning.
func (o *Outbox) Put(it Item) error {
	names, err := o.names()
	if err != nil {
		return err
	}
	if len(names) >= o.max {
		return fmt.Errorf("%w: %d items waiting in %s (event_queue_max)", ErrQueueFull, len(names), o.dir)
	}
	b, err := json.Marshal(it)
	if err != nil {
		return fmt.Errorf("event queue: %w", err)
	}
	o.mu.Lock()
	seq := max(time.Now().UnixNano(), o.last+1)
	o.last = seq
	o.mu.Unlock()
	name := fmt.Sprintf("%020d-%s.json", seq, it.ID)
	if err := atomicfile.WriteBytes(filepath.Join(o.dir, name), b, 0o600); err != nil {
		return fmt.Errorf("event queue: %w", err)
	}
	select {
	case o.kick <- struct{}{}:
	default:
	}
	return nil
}

func (o *Outbox) names() ([]string, error) {
	ents, err := os.ReadDir(o.dir)
	if err != nil {
		return nil, fmt.Errorf("event queue: %w", err)
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Pending returns up to n queued items, oldest first, with the names Ack
// takes. An unreadable item (a disk fault) is moved aside as .bad so that
// it does not block the queue, and reported in errs.
func (o *Outbox) Pending(n int) (items []Item, names []string, errs []error) {
	all, err := o.names()
	if err != nil {
		return nil, nil, []error{err}
	}
	for _, name := range all {
		if len(items) == n {
			break
		}
		path := filepath.Join(o.dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // delivered by another process meanwhile
		}
		var it Item
		if err == nil {
			err = json.Unmarshal(b, &it)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("event queue: %s: %w (moved aside as .bad)", path, err))
			os.Rename(path, path+".bad")
			continue
		}
		items = append(items, it)
		names = append(names, name)
	}
	return items, names, errs
}

// Ack removes a delivered item.
func (o *Outbox) Ack(name string) error {
	if err := os.Remove(filepath.Join(o.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("event queue: %w", err)
	}
	return nil
}

// Len is the number of items waiting.
func (o *Outbox) Len() int {
	names, _ := o.names()
	return len(names)
}
