package curve

import (
	"fmt"
	"testing"
)

var benchSizes = []int{100, 4 << 10}

func benchName(n int) string {
	if n >= 1<<10 {
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// BenchmarkSealOpen seals a frame with AppendFrame and opens it with
// OpenFrame, as the two ends of a connection do for every frame.
func BenchmarkSealOpen(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(benchName(n), func(b *testing.B) {
			cs, ss := randomHandshake(b)
			payload := make([]byte, n)
			buf := make([]byte, 0, n+9+Overhead)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				buf = cs.AppendFrame(buf[:0], false, payload)
				flags, body := splitFrame(buf)
				if _, _, err := ss.OpenFrame(flags, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSeal is the sending half alone (what a writer pays per frame).
func BenchmarkSeal(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(benchName(n), func(b *testing.B) {
			cs, _ := randomHandshake(b)
			payload := make([]byte, n)
			buf := make([]byte, 0, n+9+Overhead)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				buf = cs.AppendFrame(buf[:0], false, payload)
			}
		})
	}
}
