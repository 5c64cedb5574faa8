//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package agentcmd

// isTerminal is false where brine does not ask the console (Windows):
// output there is never coloured, which is the safe choice for a console
// that may not interpret ANSI sequences.
func isTerminal(uintptr) bool { return false }
