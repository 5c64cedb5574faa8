// Package sysuser is what the agent's modules and states need of file
// owners, the umask and running a program as another user, on every
// operating system the agent builds for: Unix has numeric owners and
// setuid, Windows has neither (its owners are SIDs, and running as
// another account needs its password), so there each function says what
// it cannot do instead of failing to build.
package sysuser
