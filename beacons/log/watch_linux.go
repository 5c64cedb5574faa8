//go:build linux

package log

import (
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watch starts an inotify watch on the file's directory, signalling Ready
// when the file is written, created or moved. Without it (no inotify, the
// directory not readable), the runner's interval is the delay.
func (b *Beacon) watch() {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return
	}
	mask := uint32(unix.IN_MODIFY | unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE | unix.IN_ONLYDIR)
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(b.path), mask); err != nil {
		_ = unix.Close(fd)
		return
	}
	b.notify = os.NewFile(uintptr(fd), "inotify")
	name := filepath.Base(b.path)
	go func() {
		defer close(b.done)
		buf := make([]byte, 16<<10)
		for {
			n, err := b.notify.Read(buf)
			if err != nil {
				return // closed; or broken, and the interval still reads the file
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				raw := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				off += unix.SizeofInotifyEvent + int(ev.Len)
				if ev.Mask&unix.IN_Q_OVERFLOW != 0 || strings.TrimRight(string(raw), "\x00") == name {
					b.signal()
				}
			}
		}
	}()
}
