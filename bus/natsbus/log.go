package natsbus

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
)

// serverLog routes the embedded nats-server's log to slog.
// note, when set, sees every error the server reports.
type serverLog struct {
	l    *slog.Logger
	note func(string)
}

func (s *serverLog) Noticef(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s *serverLog) Warnf(format string, v ...any)   { s.l.Warn(fmt.Sprintf(format, v...)) }
func (s *serverLog) Fatalf(format string, v ...any)  { s.error(fmt.Sprintf(format, v...)) }
func (s *serverLog) Errorf(format string, v ...any)  { s.error(fmt.Sprintf(format, v...)) }

func (s *serverLog) error(msg string) {
	s.l.Error(msg)
	if s.note != nil {
		s.note(msg)
	}
}
func (s *serverLog) Debugf(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s *serverLog) Tracef(format string, v ...any) {}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", p, err)
	}
	return host, port, nil
}

// displayURL hides credentials in a NATS URL before it is logged or shown.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = url.User("***")
	return u.String()
}
