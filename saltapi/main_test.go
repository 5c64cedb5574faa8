package saltapi

import (
	"os"
	"testing"

	"github.com/brinehq/brine/internal/saltpeer"
)

// TestMain removes the Salt tree the differential tests unpacked.
func TestMain(m *testing.M) {
	code := m.Run()
	saltpeer.Cleanup()
	os.Exit(code)
}
