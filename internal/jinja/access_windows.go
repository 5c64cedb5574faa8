package jinja

import "os"

// accessX is Python's os.access(p, X_OK) on Windows, which has no execute
// bit: true for any file that exists.
func accessX(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
