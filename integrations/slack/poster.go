package slack

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/slack-go/slack"
)

// poster sends messages to Slack: the Web API with a bot token, or an
// incoming webhook.
type poster interface {
	// post sends m to channel, in the thread threadTS when not empty, and
	// returns the new message's timestamp (empty for webhooks).
	post(ctx context.Context, channel, threadTS string, m message) (string, error)
	// update replaces the message ts.
	update(ctx context.Context, channel, ts string, m message) error
	// threads reports whether messages can be threaded and edited.
	threads() bool
}

type webAPI struct{ c *slack.Client }

func newWebAPI(token, apiURL string, client *http.Client) *webAPI {
	opts := []slack.Option{slack.OptionHTTPClient(client)}
	if apiURL != "" {
		opts = append(opts, slack.OptionAPIURL(apiURL))
	}
	return &webAPI{c: slack.New(token, opts...)}
}

func msgOptions(m message) []slack.MsgOption {
	opts := []slack.MsgOption{slack.MsgOptionText(m.Text, false)}
	if m.Color != "" || m.Detail != "" {
		opts = append(opts, slack.MsgOptionAttachments(slack.Attachment{Color: m.Color, Text: m.Detail,
			Fallback: m.Text, MarkdownIn: []string{"text"}}))
	}
	return opts
}

func (w *webAPI) post(ctx context.Context, channel, threadTS string, m message) (string, error) {
	opts := msgOptions(m)
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	_, ts, err := w.c.PostMessageContext(ctx, channel, opts...)
	return ts, err
}

func (w *webAPI) update(ctx context.Context, channel, ts string, m message) error {
	_, _, _, err := w.c.UpdateMessageContext(ctx, channel, ts, msgOptions(m)...)
	return err
}

func (w *webAPI) threads() bool { return true }

type webhook struct {
	url    string
	client *http.Client
}

func (w *webhook) post(ctx context.Context, channel, _ string, m message) (string, error) {
	msg := &slack.WebhookMessage{Channel: channel, Text: m.Text}
	if m.Color != "" || m.Detail != "" {
		msg.Attachments = []slack.Attachment{{Color: m.Color, Text: m.Detail, Fallback: m.Text, MarkdownIn: []string{"text"}}}
	}
	return "", slack.PostWebhookCustomHTTPContext(ctx, w.url, w.client, msg)
}

func (w *webhook) update(ctx context.Context, channel, _ string, m message) error {
	_, err := w.post(ctx, channel, "", m)
	return err
}

func (w *webhook) threads() bool { return false }

// errorKind says what to do about a failed send.
type errorKind int

const (
	transient   errorKind = iota // 5xx, network: retry with backoff
	rateLimited                  // 429: retry after Retry-After
	held                         // bad token or channel: keep the message, retry slowly, report once
	rejected                     // Slack will never take this message: report and drop it
)

// heldCodes are Slack errors that a configuration change fixes; the
// messages wait for it.
var heldCodes = map[string]bool{
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true, "token_expired": true,
	"no_permission": true, "missing_scope": true, "channel_not_found": true, "not_in_channel": true, "is_archived": true,
	"restricted_action": true, "team_access_not_granted": true, "ekm_access_denied": true, "access_denied": true,
	"org_login_required": true, "invalid_token": true, "no_service": true, "no_active_hooks": true, "action_prohibited": true,
}

// transientCodes are Slack errors worth retrying soon.
var transientCodes = map[string]bool{
	"internal_error": true, "fatal_error": true, "service_unavailable": true, "request_timeout": true, "ratelimited": true,
}

// classify sorts a send error; code names it for reports and wait is the
// Retry-After of a 429.
func classify(err error) (kind errorKind, code string, wait time.Duration) {
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &rl):
		return rateLimited, "rate_limited", max(rl.RetryAfter, time.Second)
	case errors.As(err, &se):
		switch {
		case heldCodes[se.Err]:
			return held, se.Err, 0
		case transientCodes[se.Err]:
			return transient, se.Err, 0
		}
		return rejected, se.Err, 0
	case errors.As(err, &sc):
		switch {
		case sc.Code == http.StatusTooManyRequests:
			return rateLimited, "rate_limited", time.Second
		case sc.Code >= 500:
			return transient, http.StatusText(sc.Code), 0
		case sc.Code == http.StatusBadRequest:
			return rejected, "invalid_payload", 0
		}
		// Webhooks answer 403 invalid_token, 404 no_service or
		// channel_not_found, 410 channel_is_archived.
		return held, http.StatusText(sc.Code), 0
	}
	return transient, "unreachable", 0
}
