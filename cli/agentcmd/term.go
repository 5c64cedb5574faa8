package agentcmd

import (
	"io"
	"os"
)

// ColorOn reports whether output written to w is coloured: only on a
// terminal (a pipe or a file gets plain text, for scripts), and not when
// NO_COLOR is set to anything (https://no-color.org).
func ColorOn(w io.Writer) bool {
	return os.Getenv("NO_COLOR") == "" && IsTerminal(w)
}

// IsTerminal reports whether v is an *os.File open on a terminal. A
// character device is not enough: /dev/null is one too.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && isTerminal(f.Fd())
}
