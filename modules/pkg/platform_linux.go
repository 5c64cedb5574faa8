package pkg

// platformErr is nil on Linux, where apt or dnf is chosen per call.
func platformErr() error { return nil }
