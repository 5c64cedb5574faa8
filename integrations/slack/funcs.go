package slack

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/backoff"
	"github.com/brinehq/brine/jobs"
)

// ErrNotConfigured: a slack.* function was called without a token or
// webhook, neither configured nor given as an argument.
var ErrNotConfigured = errors.New("slack is not configured (slack: token or webhook_url in the master config)")

// hookBase is where Salt's call_hook identifier is appended.
const hookBase = "https://hooks.slack.com/services/"

// funcAttempts bounds the tries of a runner function's post; the reactor
// retries the whole call after that.
const funcAttempts = 5

// Funcs are the runner functions slack.post and slack.call_hook, with Salt's
// slack_notify argument names. a is the running audit (nil when slack is not
// configured): its token, webhook, rate limits and redaction are used.
func Funcs(a *Audit) []function.Func { return funcs(func() *Audit { return a }) }

// funcs declares the functions; audit returns the running audit at each
// call (nil while the audit is off).
func funcs(audit func() *Audit) []function.Func {
	return []function.Func{
		{
			Name: "slack.post",
			Doc:  "Post message to channel with the bot token (Salt's slack.post_message).",
			Params: []function.Param{
				{Name: "channel", Kind: function.String, Required: true},
				{Name: "message", Kind: function.String, Required: true},
				{Name: "from_name", Kind: function.String},
				{Name: "api_key", Kind: function.String},
				{Name: "icon", Kind: function.String},
				{Name: "thread_ts", Kind: function.String},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return post(ctx, audit(), in)
			},
		},
		{
			Name: "slack.call_hook",
			Doc:  "Post message to an incoming webhook (Salt's slack.call_hook).",
			Params: []function.Param{
				{Name: "message", Kind: function.String, Required: true},
				{Name: "attachment", Kind: function.String},
				{Name: "color", Kind: function.String, Default: "good"},
				{Name: "short", Kind: function.Bool, Default: false},
				{Name: "identifier", Kind: function.String},
				{Name: "channel", Kind: function.String},
				{Name: "username", Kind: function.String},
				{Name: "icon_emoji", Kind: function.String},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return callHook(ctx, audit(), in)
			},
		},
	}
}

func defaultClient() *http.Client { return &http.Client{Timeout: 30 * time.Second} }

func post(ctx context.Context, a *Audit, in *function.Input) (any, error) {
	channel := in.String("channel")
	if !strings.HasPrefix(channel, "#") && !strings.HasPrefix(channel, "@") && !isID(channel) {
		channel = "#" + channel // as Salt's post_message does
	}
	var api *webAPI
	switch {
	case in.String("api_key") != "":
		apiURL, client := "", defaultClient()
		if a != nil {
			apiURL, client = a.cur().cfg.APIURL, a.client
		}
		api = newWebAPI(in.String("api_key"), apiURL, client)
	case a != nil:
		api, _ = a.cur().post.(*webAPI)
	}
	if api == nil {
		return nil, ErrNotConfigured
	}
	red := redactorOf(a)
	opts := []slack.MsgOption{slack.MsgOptionText(red.Text(in.String("message")), false)}
	if n := in.String("from_name"); n != "" {
		opts = append(opts, slack.MsgOptionUsername(n))
	}
	if icon := in.String("icon"); strings.HasPrefix(icon, ":") {
		opts = append(opts, slack.MsgOptionIconEmoji(icon))
	} else if icon != "" {
		opts = append(opts, slack.MsgOptionIconURL(icon))
	}
	if ts := in.String("thread_ts"); ts != "" {
		opts = append(opts, slack.MsgOptionTS(ts))
	}
	err := retry(ctx, a, channel, func() error {
		_, _, err := api.c.PostMessageContext(ctx, channel, opts...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return true, nil
}

func callHook(ctx context.Context, a *Audit, in *function.Input) (any, error) {
	url := ""
	switch {
	case in.String("identifier") != "":
		url = hookBase + strings.TrimPrefix(in.String("identifier"), hookBase)
	case a != nil && a.cur().cfg.WebhookURL != "":
		url = a.cur().cfg.WebhookURL
	default:
		return nil, ErrNotConfigured
	}
	red := redactorOf(a)
	text := red.Text(in.String("message"))
	msg := &slack.WebhookMessage{Channel: in.String("channel"), Username: in.String("username"), IconEmoji: in.String("icon_emoji")}
	if att := in.String("attachment"); att != "" {
		msg.Attachments = []slack.Attachment{{Fallback: text, Color: in.String("color"), Pretext: text,
			Fields: []slack.AttachmentField{{Value: red.Text(att), Short: in.Bool("short")}}}}
	} else {
		msg.Text = text
	}
	client := defaultClient()
	if a != nil {
		client = a.client
	}
	err := retry(ctx, a, "hook:"+msg.Channel, func() error {
		return slack.PostWebhookCustomHTTPContext(ctx, url, client, msg)
	})
	if err != nil {
		return nil, err
	}
	return true, nil
}

// retry runs send under the audit's channel rate, retrying 429s and
// transient errors a few times.
func retry(ctx context.Context, a *Audit, channel string, send func() error) error {
	for try := 1; ; try++ {
		if a != nil {
			if err := a.wait(ctx, channel); err != nil {
				return err
			}
		}
		err := send()
		if err == nil {
			return nil
		}
		kind, _, wait := classify(err)
		if try >= funcAttempts || kind == held || kind == rejected || ctx.Err() != nil {
			return err
		}
		if kind == transient {
			wait = retryWait(try)
		}
		if !backoff.Sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}

func redactorOf(a *Audit) *jobs.Redactor {
	if a != nil {
		return a.cur().red
	}
	return jobs.NewRedactor(nil, nil, nil)
}

// isID reports a Slack conversation id (C…, G…, D… in capitals).
func isID(s string) bool {
	if len(s) < 9 || !strings.ContainsRune("CGD", rune(s[0])) {
		return false
	}
	return strings.ToUpper(s) == s
}
