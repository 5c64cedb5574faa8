package saltzmq

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// refusalLogEvery is how often refusals over the caps are logged at most:
// a flood of connections must not flood the log as well.
const refusalLogEvery = 10 * time.Second

// serveListener accepts connections on ln until ctx ends, counting each in
// lim from accept until serve calls its Authenticated or it ends, and
// serves each on its own goroutine. It then closes ln and returns once
// every connection has ended. TCP keepalive is the listener's (see
// net.ListenConfig): connections are not closed for being quiet.
func serveListener(ctx context.Context, ln net.Listener, log *slog.Logger, lim *limiter, serve func(context.Context, Accepted)) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var (
		wg         sync.WaitGroup
		delay      time.Duration
		lastLog    time.Time
		suppressed int
	)
	defer wg.Wait()
	for {
		raw, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of file descriptors and the like: back off, as net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			log.Warn("accept failed", "err", err, "retry_in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		release, reason := lim.admit(raw)
		if release == nil {
			raw.Close()
			if now := time.Now(); now.Sub(lastLog) >= refusalLogEvery {
				log.Warn("connection refused", "remote", raw.RemoteAddr().String(), "reason", reason,
					"refused_since_last_line", suppressed, "logged_at_most_every", refusalLogEvery)
				lastLog, suppressed = now, 0
			} else {
				suppressed++
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer release()
			serve(ctx, Accepted{Conn: raw, Authenticated: release})
		}()
	}
}
