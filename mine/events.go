package mine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/backoff"
)

// Tags the mine follows besides salt-cloud's.
const (
	// UpdateTag carries {id, fields…} for any source that is not a cloud
	// driver: agents, webhooks (through a reaction), scripts.
	UpdateTag = "brine/mine/update"
	// DeleteTag carries {id} and removes the host.
	DeleteTag = "brine/mine/delete"
	// ErrorTag reports an event the mine could not use, with the reason.
	ErrorTag = "brine/mine/error"
)

// Durable consumers that feed the mine; masters sharing a bus share them.
const (
	CloudConsumer  = "mine-cloud"
	UpdateConsumer = "mine-update"
)

// ErrBadEvent reports an event whose data cannot describe a host; it is
// acknowledged (redelivery would not fix it) and reported with ErrorTag.
var ErrBadEvent = errors.New("bad mine event")

// Apply updates the mine from one event. salt/cloud/<name>/created adds or
// updates the host (deploy_script and waiting_for_ssh too, when they carry
// an address), salt/cloud/<name>/destroyed removes it; UpdateTag and
// DeleteTag do the same for other sources. Other events are ignored. The
// event's log position (Seq) orders the writes: an event older than one the
// record already reflects is ErrStale; a removal always applies.
//
// Only the master and its operators change the mine through events: an
// event an agent sent (its source says so, whatever its tag) is
// ErrBadEvent, so that no agent can move or remove another host's records,
// and with them its DNS and DHCP entries. Agents report their own record
// with mine.send, which writes under the id their key was accepted as.
func (s *Store) Apply(ctx context.Context, ev *bus.Event) error {
	if id, ok := ev.Agent(); ok && (ev.Tag == UpdateTag || ev.Tag == DeleteTag || strings.HasPrefix(ev.Tag, "salt/cloud/")) {
		return fmt.Errorf("%w: %s: sent by agent %s: only the master and its operators change the mine through events", ErrBadEvent, ev.Tag, id)
	}
	data, err := ev.DataMap()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadEvent, ev.Tag, err)
	}
	switch ev.Tag {
	case UpdateTag:
		return s.applyUpdate(ctx, ev, data)
	case DeleteTag:
		id, err := stringField(ev.Tag, data, "id")
		if err == nil && id == "" {
			err = fmt.Errorf("%w: %s: field \"id\" is required", ErrBadEvent, ev.Tag)
		}
		if err != nil {
			return err
		}
		return s.remove(ctx, ev, id)
	}
	parts := strings.Split(ev.Tag, "/")
	if len(parts) != 4 || parts[0] != "salt" || parts[1] != "cloud" {
		return nil
	}
	task := parts[3]
	switch task {
	case "created", "destroyed", "deploy_script", "waiting_for_ssh":
	default:
		return nil
	}
	// Some drivers fire salt/cloud/{net,disk,firewall…}/created for
	// resources that are not machines; their `event` does not say "instance".
	if msg, ok := data["event"].(string); ok && (task == "created" || task == "destroyed") && !strings.Contains(msg, "instance") {
		return nil
	}
	name, err := stringField(ev.Tag, data, "name")
	if err != nil {
		return err
	}
	if name == "" {
		name = parts[2]
	}
	if err := ValidateID(name); err != nil {
		return fmt.Errorf("%w: %s: field \"name\": %w", ErrBadEvent, ev.Tag, err)
	}
	if task == "destroyed" {
		return s.remove(ctx, ev, name)
	}
	c, err := readCloud(ev.Tag, data)
	if err != nil {
		return err
	}
	if task != "created" && len(c.ips) == 0 && len(c.addIPs) == 0 {
		return nil // nothing this event knows that the mine needs
	}
	_, err = s.Update(ctx, Write{ID: name, Source: ev.Tag, Seq: ev.Seq, Mutate: c.apply})
	return err
}

func (s *Store) remove(ctx context.Context, ev *bus.Event, id string) error {
	if err := ValidateID(id); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadEvent, ev.Tag, err)
	}
	_, err := s.Delete(ctx, id)
	return err
}

// cloudInfo is what a salt-cloud event says about a host.
type cloudInfo struct {
	ips, addIPs, macs                  []string
	hasMACs                            bool
	fqdn, provider, driver, instanceID string
	profile                            string
	grains                             map[string]any
}

func readCloud(tag string, data map[string]any) (*cloudInfo, error) {
	c := &cloudInfo{}
	var err error
	for _, k := range []string{"private_ips", "public_ips"} {
		l, ferr := listField(tag, data, k)
		if ferr != nil {
			return nil, ferr
		}
		c.ips = append(c.ips, l...)
	}
	ip, err := listField(tag, data, "ip_address")
	if err != nil {
		return nil, err
	}
	if len(c.ips) > 0 {
		// The lists are the full set; ip_address is one of them (or is
		// added after them).
		c.ips = append(c.ips, ip...)
	} else {
		c.addIPs = ip
	}
	// deploy_script's `host` is what the deploy connected to: an address
	// or a name; only an address belongs in ips.
	if host, _ := data["host"].(string); host != "" {
		if _, perr := netip.ParseAddr(strings.TrimSpace(host)); perr == nil {
			c.addIPs = append(c.addIPs, host)
		}
	}
	if _, c.hasMACs = data["macs"]; c.hasMACs {
		if c.macs, err = listField(tag, data, "macs"); err != nil {
			return nil, err
		}
	}
	fields := []struct {
		key string
		dst *string
	}{{"fqdn", &c.fqdn}, {"provider", &c.provider}, {"driver", &c.driver}, {"instance_id", &c.instanceID}, {"profile", &c.profile}}
	for _, f := range fields {
		if *f.dst, err = stringField(tag, data, f.key); err != nil {
			return nil, err
		}
	}
	if g, ok := data["grains"]; ok {
		if c.grains, ok = g.(map[string]any); !ok {
			return nil, fmt.Errorf("%w: %s: field \"grains\": want a mapping, got %T", ErrBadEvent, tag, g)
		}
	}
	return c, nil
}

func (c *cloudInfo) apply(h *Host) error {
	if len(c.ips) > 0 {
		h.SetIPs(c.ips...)
	}
	h.AddIPs(c.addIPs...)
	if c.hasMACs {
		h.SetMACs(c.macs...)
	}
	for _, f := range []struct{ src, dst *string }{{&c.fqdn, &h.FQDN}, {&c.provider, &h.Provider},
		{&c.driver, &h.Driver}, {&c.instanceID, &h.InstanceID}} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	h.MergeGrains(c.grains)
	// salt-cloud gives its minions grains["salt-cloud"] = {driver, profile, provider}.
	sc, _ := h.Grains["salt-cloud"].(map[string]any)
	if sc == nil {
		sc = map[string]any{}
	}
	for k, v := range map[string]string{"driver": c.driver, "profile": c.profile, "provider": c.provider} {
		if v != "" {
			sc[k] = v
		}
	}
	if len(sc) > 0 {
		h.MergeGrains(map[string]any{"salt-cloud": sc})
	}
	return nil
}

// UpdateFields are the fields mine.update and UpdateTag events set.
var UpdateFields = []string{"fqdn", "ips", "macs", "grains", "provider", "driver", "instance_id", "data"}

func (s *Store) applyUpdate(ctx context.Context, ev *bus.Event, data map[string]any) error {
	id, err := stringField(ev.Tag, data, "id")
	if err != nil {
		return err
	}
	if id == "" {
		return fmt.Errorf("%w: %s: field \"id\" is required", ErrBadEvent, ev.Tag)
	}
	if err := ValidateID(id); err != nil {
		return fmt.Errorf("%w: %s: field \"id\": %w", ErrBadEvent, ev.Tag, err)
	}
	clear, _ := data["clear"].(bool)
	fields := map[string]any{}
	var unknown []string
	for k, v := range data {
		switch {
		case k == "id" || k == "clear" || strings.HasPrefix(k, "_"):
		case slices.Contains(UpdateFields, k):
			fields[k] = v
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("%w: %s: unknown field %q (known: id, clear, %s)", ErrBadEvent, ev.Tag, unknown[0], strings.Join(UpdateFields, ", "))
	}
	_, err = s.Update(ctx, Write{ID: id, Source: ev.Tag, Seq: ev.Seq, Mutate: func(h *Host) error {
		if clear {
			*h = Host{ID: id, Revision: h.Revision}
		}
		return ApplyFields(h, fields)
	}})
	if isFieldError(err) {
		return fmt.Errorf("%w: %s: %w", ErrBadEvent, ev.Tag, err)
	}
	return err
}

// fieldError marks a field value that cannot be used.
type fieldError struct{ error }

func (e fieldError) Unwrap() error { return e.error }

func isFieldError(err error) bool {
	var fe fieldError
	return errors.As(err, &fe)
}

// ApplyFields sets record fields by name (UpdateFields): ips and macs are
// replaced, grains and data merged key by key.
func ApplyFields(h *Host, fields map[string]any) error {
	keys := slices.Sorted(maps.Keys(fields))
	for _, k := range keys {
		v := fields[k]
		var err error
		switch k {
		case "grains":
			g, ok := v.(map[string]any)
			if !ok {
				err = fmt.Errorf("want a mapping, got %T", v)
				break
			}
			h.MergeGrains(g)
		case "data":
			d, ok := v.(map[string]any)
			if !ok {
				err = fmt.Errorf("want a mapping, got %T", v)
				break
			}
			for fk, fv := range d {
				if err = h.Set(fk, fv); err != nil {
					break
				}
			}
		default:
			err = h.Set(k, v)
		}
		if err != nil {
			return fieldError{fmt.Errorf("field %q: %w", k, err)}
		}
	}
	return nil
}

func stringField(tag string, data map[string]any, key string) (string, error) {
	switch v := data[key].(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	default:
		return "", fmt.Errorf("%w: %s: field %q: want a string, got %T", ErrBadEvent, tag, key, v)
	}
}

func listField(tag string, data map[string]any, key string) ([]string, error) {
	l, err := Strings(data[key])
	if err != nil {
		return nil, fmt.Errorf("%w: %s: field %q: %v", ErrBadEvent, tag, key, err)
	}
	return l, nil
}

// EventBus is what Follow needs from the bus.
type EventBus interface {
	bus.Publisher
	Consume(ctx context.Context, cfg bus.ConsumerConfig, fn func(context.Context, *bus.Delivery)) (bus.Subscription, error)
}

// Follow keeps the mine up to date from the bus until ctx ends: two durable
// consumers (CloudConsumer on salt/cloud/*, UpdateConsumer on brine/mine/*)
// apply each event in log order, one at a time, acknowledging it once the
// record is written. A failed write is retried in place (with back-off)
// rather than put back, so that no later event about the host overtakes
// it, up to bus.MaxAttempts (some minutes), after which the event is
// dead-lettered (bus.DeadLetterTag) and the mine goes on. An event that cannot describe a host is acknowledged and reported
// with ErrorTag. source names the events Follow fires.
func (s *Store) Follow(ctx context.Context, b EventBus, source string, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	handle := func(ctx context.Context, d *bus.Delivery) {
		ev := d.Event
		err := s.Apply(ctx, ev)
		if err != nil {
			// Retries may take long: the delivery stays this master's.
			defer d.KeepAlive(5 * time.Second)()
		}
		attempts := max(d.Attempt, 1)
		for wait := time.Second; err != nil && !errors.Is(err, ErrStale) && !errors.Is(err, ErrBadEvent) && !errors.Is(err, ErrInvalidID); wait = min(2*wait, maxRetryWait) {
			if attempts >= bus.MaxAttempts {
				// Never written after minutes of trying: recorded as a
				// dead letter rather than holding every later event
				// back for ever.
				log.Error("mine: event dead-lettered", "tag", ev.Tag, "id", ev.ID, "attempts", attempts, "err", err)
				if derr := bus.DeadLetter(ctx, b, source, consumerOf(ev.Tag), d, attempts, err, time.Second); derr != nil {
					log.Error("mine: dead letter", "err", derr)
				}
				return
			}
			log.Warn("mine: event not applied; retrying", "tag", ev.Tag, "id", ev.ID, "retry_in", wait, "err", err)
			if !backoff.Sleep(ctx, wait) {
				return // not acknowledged: redelivered after a restart
			}
			attempts++
			err = s.Apply(ctx, ev)
		}
		switch {
		case errors.Is(err, ErrStale):
			log.Debug("mine: stale event ignored", "tag", ev.Tag, "id", ev.ID, "reason", err)
		case err != nil:
			log.Error("mine: event not applied", "tag", ev.Tag, "id", ev.ID, "err", err)
			rep := map[string]any{"tag": ev.Tag, "event_id": ev.ID, "error": err.Error()}
			if _, nerr := bus.Fire(ctx, b, ErrorTag, rep, bus.Origin{Source: source, Cause: ev}); nerr != nil {
				log.Error("mine: reporting a bad event", "err", nerr)
			}
		}
		if aerr := d.Ack(); aerr != nil {
			log.Error("mine: ack", "tag", ev.Tag, "err", aerr)
		}
	}
	var subs []bus.Subscription
	defer func() {
		for _, sub := range subs {
			sub.Stop()
		}
	}()
	for _, c := range []bus.ConsumerConfig{
		{Name: CloudConsumer, Pattern: "salt/cloud/*", MaxInFlight: 1},
		{Name: UpdateConsumer, Pattern: "brine/mine/*", MaxInFlight: 1},
	} {
		sub, err := b.Consume(ctx, c, handle)
		if err != nil {
			return fmt.Errorf("mine: %w", err)
		}
		subs = append(subs, sub)
	}
	<-ctx.Done()
	return nil
}

// consumerOf names the consumer that follows tag.
func consumerOf(tag string) string {
	if strings.HasPrefix(tag, "salt/cloud/") {
		return CloudConsumer
	}
	return UpdateConsumer
}

// maxRetryWait caps the back-off of a failed write.
const maxRetryWait = 30 * time.Second
