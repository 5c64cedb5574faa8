package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// The server speaks ZMTP 3.0 itself once zmq4 has done a connection's
// handshake (greeting, security mechanism, metadata, socket-type check).
// zmq4's own PUB and ROUTER sockets share one writer across all peers, so one
// peer that stops reading stalls every other; their queues are unbounded; the
// PUB writer goroutine is never stopped; accept runs handshakes inline, so one
// silent client blocks every new connection; and a frame header announcing
// 2^62 bytes is allocated before it is read. Owning the steady state gives
// each peer its own bounded queue and writer, frames encoded once for every
// watcher, read limits, and a shutdown that leaves no goroutine behind.

const (
	// flushTimeout bounds the final write of replies to a requester that
	// is going away.
	flushTimeout = 5 * time.Second
	// maxHandshakeFrame bounds any frame read before a peer is authenticated
	// (commands and metadata are a few hundred bytes).
	maxHandshakeFrame = 64 << 10
)

// maxFrames bounds the frames of one message after the handshake. Every
// message of this protocol has at most 4 frames (a request: id, method,
// body, mac), and the bound on bytes alone let a peer send empty frames,
// which add nothing to a byte count while each costs a slice header: 32
// MiB of 2-byte empty frames held 1.4 GiB. So frames are counted, and each
// frame costs its header and zmtp.FrameCost besides its payload.
const maxFrames = 8

// overLimit reports whether err is a message refused for its size or its
// frame count (zmtp.ErrTooManyFrames matches zmtp.ErrTooLarge too): the
// peer broke a bound, not the network, and is logged.
func overLimit(err error) bool {
	return errors.Is(err, zmtp.ErrTooLarge)
}

// handshakeConn is what zmq4.Open reads and writes during a handshake: reads
// come from the connection's buffered reader through a guard that refuses
// oversized frame headers before zmq4 allocates their bodies.
type handshakeConn struct {
	net.Conn
	br    *bufio.Reader
	guard frameGuard
	// sent is how many bytes of zmq4's greeting were already written
	// (zmtp.PrefixSize, by a server that had to learn the peer's mechanism
	// first); they are dropped from zmq4's first write.
	sent int
}

func (c *handshakeConn) Write(p []byte) (int, error) {
	if c.sent == 0 {
		return c.Conn.Write(p)
	}
	k := min(c.sent, len(p))
	c.sent -= k
	n, err := c.Conn.Write(p[k:])
	return n + k, err
}

func (c *handshakeConn) Read(p []byte) (int, error) {
	n, err := c.br.Read(p)
	if gerr := c.guard.feed(p[:n]); gerr != nil {
		return 0, gerr
	}
	return n, err
}

// frameGuard follows ZMTP framing over a byte stream: the greeting, then
// frame headers and bodies; it fails on a header announcing more than max.
type frameGuard struct {
	skip uint64 // bytes of greeting or body still to pass
	hdr  []byte
	max  uint64
}

func newFrameGuard(max uint64) frameGuard {
	return frameGuard{skip: zmtp.GreetingSize, hdr: make([]byte, 0, 9), max: max}
}

func (g *frameGuard) feed(p []byte) error {
	for len(p) > 0 {
		if g.skip > 0 {
			k := min(g.skip, uint64(len(p)))
			g.skip -= k
			p = p[k:]
			continue
		}
		g.hdr = append(g.hdr, p[0])
		p = p[1:]
		_, size, n := zmtp.ParseHeader(g.hdr)
		if n == 0 {
			continue
		}
		if size > g.max {
			return fmt.Errorf("%w: a frame of %d bytes during handshake", zmtp.ErrTooLarge, size)
		}
		g.skip = size
		g.hdr = g.hdr[:0]
	}
	return nil
}

// peerConn is one accepted connection after its handshake: a reader owned by
// the goroutine serving it and a writer goroutine draining a bounded queue of
// encoded messages, so that a slow peer only ever fills its own queue.
type peerConn struct {
	raw    net.Conn
	br     *bufio.Reader
	remote string
	// sess seals and opens the frames of a CURVE connection (nil: frames
	// travel in clear, as with NULL).
	sess *curve.Session
	// idle, when set, bounds the wait for each message and expires the
	// connection's whole life. Only unauthenticated (NULL) connections and
	// agents' before their first request (firstOnly) have them:
	// authenticated ones may be idle for hours (see keepAlive).
	firstOnly bool
	idle      time.Duration
	expires   time.Time
	out       chan []byte
	// queued counts the bytes in out, bounded by maxQueued: a count alone
	// would let a stalled peer pin gigabytes of large events.
	queued    atomic.Int64
	maxQueued int64

	dead      chan struct{} // closed when the connection is closed
	closeOnce sync.Once
	quit      chan struct{} // closed to flush the queue and stop writing
	quitOnce  sync.Once

	// The writer goroutine runs only while there is something to write
	// (and a little after): an idle connection has none.
	wmu     sync.Mutex
	writing bool           // a writer is running
	stopped bool           // no writer may start any more
	writers sync.WaitGroup // the running writer
}

// handshake runs zmq4's server (or client) side of the ZMTP handshake on
// raw within timeout, with sec as the security mechanism and typ as this
// end's socket type; zmq4 refuses a peer whose socket type does not fit.
// br, when not nil, is raw's reader holding what was already peeked, and
// sent the bytes of the greeting already written. The handshake is
// abandoned when ctx ends. The connection's queue is set up by start.
func handshake(ctx context.Context, raw net.Conn, br *bufio.Reader, sent int, sec zmq4.Security, typ zmq4.SocketType, server bool, timeout time.Duration) (*peerConn, error) {
	if br == nil {
		br = bufio.NewReaderSize(raw, readBuffer)
	}
	hc := &handshakeConn{Conn: raw, br: br, guard: newFrameGuard(maxHandshakeFrame), sent: sent}
	if err := raw.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	id := zmq4.SocketIdentity("")
	if server {
		id = zmq4.SocketIdentity("brine-master")
	}
	_, err := zmq4.Open(hc, sec, typ, id, server, nil)
	stop()
	if err != nil {
		return nil, err
	}
	if err := raw.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	pc := &peerConn{
		raw:    raw,
		br:     br,
		remote: raw.RemoteAddr().String(),
		dead:   make(chan struct{}),
		quit:   make(chan struct{}),
	}
	if m, ok := sec.(*curve.Mechanism); ok {
		pc.sess = m.Session()
	}
	return pc, nil
}

// readBuffer is the size of a connection's read buffer: large enough that
// a burst of requests costs one system call, small enough that thousands of
// idle agents do not pin megabytes.
const readBuffer = 16 << 10

// start sets up the connection's bounded queue; its writer starts with
// the first message.
func (pc *peerConn) start(queue int, maxQueued int64) {
	pc.out = make(chan []byte, queue)
	pc.maxQueued = maxQueued
}

// kick starts the writer unless one runs or the connection is stopping.
func (pc *peerConn) kick() {
	pc.wmu.Lock()
	defer pc.wmu.Unlock()
	if pc.writing || pc.stopped {
		return
	}
	pc.writing = true
	pc.writers.Add(1)
	go pc.writeLoop()
}

// idleWriter reports whether the writer may end: nothing is queued. It
// then no longer counts as running, so the next send starts another.
func (pc *peerConn) idleWriter() bool {
	pc.wmu.Lock()
	defer pc.wmu.Unlock()
	if len(pc.out) > 0 {
		return false
	}
	pc.writing = false
	return true
}

// stopWriting waits for the writer to end; none starts afterwards.
func (pc *peerConn) stopWriting() {
	pc.wmu.Lock()
	pc.stopped = true
	pc.wmu.Unlock()
	pc.writers.Wait()
}

// close drops the connection at once; queued messages are discarded.
func (pc *peerConn) close() {
	pc.closeOnce.Do(func() {
		close(pc.dead)
		pc.raw.Close()
	})
}

// finish lets the writer send what is queued, within flushTimeout (a peer
// that stopped reading must not hold up a shutdown), then closes the
// connection.
func (pc *peerConn) finish() {
	pc.raw.SetWriteDeadline(time.Now().Add(flushTimeout))
	pc.quitOnce.Do(func() { close(pc.quit) })
	pc.stopWriting()
	pc.close()
}

// send queues an encoded message without blocking. It reports false when the
// queue is full (in messages or bytes); a message for a closed connection is
// discarded.
func (pc *peerConn) send(m []byte) bool {
	select {
	case <-pc.dead:
		return true
	default:
	}
	// One message larger than the bound still goes when nothing else waits.
	n := int64(len(m))
	if q := pc.queued.Add(n); q > pc.maxQueued && q != n {
		pc.queued.Add(-n)
		return false
	}
	select {
	case pc.out <- m:
		pc.kick()
		return true
	default:
		pc.queued.Add(-n)
		return false
	}
}

// writerLinger is how long a writer with nothing to write waits for more
// before it ends: a busy watcher keeps its writer, an idle agent has none.
const writerLinger = time.Second

// writeLoop drains the queue through a buffer flushed whenever the queue is
// empty: one write system call carries as many messages as have piled up.
// On a CURVE connection each frame is sealed here, in wire order, which is
// the order the peer checks nonces in (one writer runs at a time). The
// buffer is taken when there is something to write, and the writer ends
// after writerLinger without any: an idle connection holds neither.
func (pc *peerConn) writeLoop() {
	defer pc.writers.Done()
	linger := time.NewTimer(writerLinger)
	defer linger.Stop()
	var (
		bw     *bufio.Writer
		sealed []byte
	)
	write := func(m []byte) bool {
		pc.queued.Add(-int64(len(m)))
		if bw == nil {
			bw = writers.Get().(*bufio.Writer)
			bw.Reset(pc.raw)
		}
		if pc.sess != nil {
			sealed = sealMsg(pc.sess, sealed[:0], m)
			m = sealed
		}
		if _, err := bw.Write(m); err != nil {
			pc.close()
			return false
		}
		if cap(sealed) > writeBuffer {
			sealed = nil
		}
		return true
	}
	flush := func() bool {
		if bw == nil {
			return true
		}
		err := bw.Flush()
		// Idle: give the buffers back, so that a connection that is not
		// writing holds none (thousands of idle agents).
		bw.Reset(nil)
		writers.Put(bw)
		bw, sealed = nil, nil
		if err != nil {
			pc.close()
			return false
		}
		return true
	}
	for {
		select {
		case m := <-pc.out:
			if !write(m) {
				return
			}
			if len(pc.out) == 0 {
				if !flush() {
					return
				}
				linger.Reset(writerLinger)
			}
		case <-linger.C:
			if pc.idleWriter() {
				return
			}
			linger.Reset(writerLinger)
		case <-pc.quit:
			for {
				select {
				case m := <-pc.out:
					if !write(m) {
						return
					}
				default:
					flush()
					return
				}
			}
		case <-pc.dead:
			return
		}
	}
}

// writeBuffer is the size of a connection's write buffer while it writes.
const writeBuffer = 64 << 10

// writers are the write buffers of connections that are writing, shared:
// a burst of replies to many agents reuses a few buffers instead of making
// garbage of one per reply.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, writeBuffer) }}

// shrinkReader replaces the connection's read buffer with one of size,
// keeping what was already read ahead: for connections that mostly wait
// (agents), whose buffer would otherwise be most of what they cost.
func (pc *peerConn) shrinkReader(size int) {
	var src io.Reader = pc.raw
	if n := pc.br.Buffered(); n > 0 {
		ahead, _ := pc.br.Peek(n)
		src = io.MultiReader(bytes.NewReader(bytes.Clone(ahead)), pc.raw)
	}
	pc.br = bufio.NewReaderSize(src, size)
}

// sealMsg appends the CURVE MESSAGE frames carrying the frames of m, a
// message encoded by zmtp.EncodeMsg.
func sealMsg(sess *curve.Session, dst, m []byte) []byte {
	for len(m) > 0 {
		flags, size, n := zmtp.ParseHeader(m)
		m = m[n:]
		dst = sess.AppendFrame(dst, flags&zmtp.FlagMore != 0, m[:size])
		m = m[size:]
	}
	return dst
}

// readMsg reads one message (all its frames), opening the frames of a
// CURVE connection. Commands (PING and the like) are reported with cmd set.
// A message of more than maxFrames frames, or over max bytes counting each
// frame's header and zmtp.FrameCost, is an error: the connection cannot be
// resynchronised, so it is dropped. A sealed frame may exceed max by its
// seal (curve.Overhead); what it carries is counted as opened.
func (pc *peerConn) readMsg(max int) (frames [][]byte, cmd bool, err error) {
	o := zmtp.ReadOptions{Max: max, MaxFrames: maxFrames}
	if pc.sess != nil {
		o.Slack, o.Open = curve.Overhead, pc.sess.OpenFrame
	}
	return zmtp.ReadMsg(pc.br, o)
}
