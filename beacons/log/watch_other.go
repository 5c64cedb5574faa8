//go:build !linux

package log

// watch does nothing: only Linux has the inotify descriptor the beacon
// waits on, so elsewhere the runner's interval is the delay between reads
// of the file (Salt's log beacon polls everywhere).
func (b *Beacon) watch() {}
