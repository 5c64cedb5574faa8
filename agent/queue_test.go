package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOutboxKeepsOrderAcrossProcessesAndBounds(t *testing.T) {
	dir := t.TempDir()
	a, err := OpenOutbox(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenOutbox(dir, 3) // another process on the same directory
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range []*Outbox{a, b, a} {
		it, err := EventItem("web01", "app/"+string(rune('a'+i)), map[string]any{"i": i})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Put(it); err != nil {
			t.Fatal(err)
		}
	}
	it, _ := EventItem("web01", "app/d", nil)
	if err := a.Put(it); !errors.Is(err, ErrQueueFull) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("put beyond event_queue_max: %v", err)
	}
	items, names, errs := b.Pending(10)
	if len(errs) > 0 || len(items) != 3 {
		t.Fatalf("pending = %v %v", items, errs)
	}
	for i, want := range []string{"app/a", "app/b", "app/c"} {
		if items[i].Tag != want {
			t.Fatalf("item %d = %s, want %s (order)", i, items[i].Tag, want)
		}
	}
	if err := a.Ack(names[0]); err != nil {
		t.Fatal(err)
	}
	if err := b.Ack(names[0]); err != nil { // acknowledged twice: no error
		t.Fatal(err)
	}
	if a.Len() != 2 {
		t.Fatalf("len = %d after one ack", a.Len())
	}
	// A damaged item is moved aside and does not block the others.
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000001-broken.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	items, _, errs = a.Pending(10)
	if len(errs) != 1 || len(items) != 2 || items[0].Tag != "app/b" {
		t.Fatalf("with a broken item: %v %v", items, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "00000000000000000001-broken.json.bad")); err != nil {
		t.Fatalf("broken item not moved aside: %v", err)
	}
}

func TestEventItemIsSaltsMinionEvent(t *testing.T) {
	if _, err := EventItem("web01", "", nil); err == nil {
		t.Fatal("empty tag accepted")
	}
	it, err := EventItem("web01", "myco/deploy", map[string]any{"v": 1})
	if err != nil {
		t.Fatal(err)
	}
	if it.Kind != "event" || it.ID == "" || !strings.Contains(string(it.Body), `"cmd":"_minion_event"`) {
		t.Fatalf("item = %+v %s", it, it.Body)
	}
}
