package main

import (
	"bytes"
	"testing"

	"github.com/brinehq/brine/keys"
)

func TestPrintKeysColours(t *testing.T) {
	l := keys.Listing{keys.ListPending: {"web2"}, keys.ListAccepted: {"web1"}, keys.ListRejected: {}, keys.ListDenied: {"web1"}}
	var plain, colour bytes.Buffer
	if err := printKeys(&plain, palette{}, l); err != nil {
		t.Fatal(err)
	}
	if want := "Accepted Keys:\nweb1\nDenied Keys:\nweb1\nUnaccepted Keys:\nweb2\nRejected Keys:\n"; plain.String() != want {
		t.Errorf("plain %q, want %q", plain.String(), want)
	}
	if err := printKeys(&colour, palette{on: true}, l); err != nil {
		t.Fatal(err)
	}
	want := "\x1b[1;32mAccepted Keys:\x1b[0m\n\x1b[0;32mweb1\x1b[0m\n\x1b[1;35mDenied Keys:\x1b[0m\n\x1b[0;35mweb1\x1b[0m\n" +
		"\x1b[1;31mUnaccepted Keys:\x1b[0m\n\x1b[0;31mweb2\x1b[0m\n\x1b[1;34mRejected Keys:\x1b[0m\n"
	if colour.String() != want {
		t.Errorf("colour %q, want %q", colour.String(), want)
	}
	if ansiCode.ReplaceAllString(colour.String(), "") != plain.String() {
		t.Error("colour changes the text")
	}
}
