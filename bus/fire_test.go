package bus

import "testing"

func TestRecorderKeepsEventsInOrder(t *testing.T) {
	var r Recorder
	for _, tag := range []string{"a/1", "a/2"} {
		if _, err := Fire(t.Context(), &r, tag, nil, Origin{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	got := r.Events()
	if len(got) != 2 || got[0].Tag != "a/1" || got[1].Tag != "a/2" || got[0].Source != "test" {
		t.Fatalf("recorded %+v", got)
	}
	got[0] = nil
	if r.Events()[0] == nil {
		t.Error("Events returned the recorder's own slice")
	}
}
