package main

import "testing"

func TestSaltNamesAreCommands(t *testing.T) {
	root := newRootCmd()
	for name, sub := range saltNames {
		cmd, _, err := root.Find([]string{sub})
		if err != nil || cmd == root || cmd.Name() != sub {
			t.Errorf("%s runs %q, which is not a command: %v", name, sub, err)
		}
	}
}
