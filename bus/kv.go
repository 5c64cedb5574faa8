package bus

import (
	"errors"
	"time"
)

// BucketConfig describes a durable key-value bucket kept beside the events
// (the mine, jobs, dead letters, Slack threads). Opening a bucket that
// exists applies the configuration to it.
type BucketConfig struct {
	// Name identifies the bucket on the server: letters, digits, - and _.
	Name string
	// Description is shown by the server's tools.
	Description string
	// TTL expires each value this long after it was written (0: never).
	TTL time.Duration
	// History is how many values are kept per key (default 1).
	History int
}

// Entry is one value of a bucket.
type Entry struct {
	Key   string
	Value []byte
	// Revision orders every write of the bucket; an update names the one it
	// read so that concurrent writers cannot lose each other's changes.
	Revision uint64
	// Deleted marks a removal (seen by watchers); Value is empty.
	Deleted bool
}

// Errors of key-value buckets; test them with errors.Is.
var (
	// ErrKeyNotFound: no value for that key (never written, deleted or expired).
	ErrKeyNotFound = errors.New("key not found")
	// ErrKeyChanged: a create found the key present, or an update found it
	// at another revision than the one it named.
	ErrKeyChanged = errors.New("key changed concurrently")
)
