package jobs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/internal/backoff"
	"github.com/brinehq/brine/internal/fnmatch"
)

// BucketName is the key-value bucket the master keeps jobs in, keyed by JID.
const BucketName = "jobs"

// DefaultKeep is how long a job is kept after its last change: Salt's
// keep_jobs_seconds default (24 h).
const DefaultKeep = 24 * time.Hour

// ConsumerName is the durable consumer that records job events; masters
// sharing a bus share it, so each event is recorded once.
const ConsumerName = "jobs"

// Errors returned by the store; test them with errors.Is.
var (
	// ErrNotFound: no job with that JID is kept.
	ErrNotFound = errors.New("job not found")
	// ErrNotJobEvent: the event is not a job event or its data is unusable.
	ErrNotJobEvent = errors.New("not a job event")
)

// Kinds of job, after the tag family of their events.
const (
	KindRun = "run" // salt/run/<jid>/…: runner jobs (brine run, reactions, cloud runs)
	KindJob = "job" // salt/job/<jid>/…: targeted jobs, with one return per minion
)

// Job is a recorded job, what `brine jobs show` prints; the fields follow
// Salt's job events and jobs.lookup_jid.
type Job struct {
	JID     string   `json:"jid"`
	Kind    string   `json:"kind"`
	Fun     string   `json:"fun"`
	Arg     []any    `json:"arg"`
	Tgt     any      `json:"tgt,omitempty"`
	TgtType string   `json:"tgt_type,omitempty"`
	User    string   `json:"user,omitempty"`
	Minions []string `json:"minions,omitempty"`
	// NotConnected are targeted minions that were not connected when the
	// job was published: it was not sent to them, and they will not return.
	NotConnected []string `json:"not_connected,omitempty"`
	// StartTime is when the job started (its JID's time, or the new event's).
	StartTime time.Time `json:"start_time"`
	// EndTime is set when a runner job returned or every minion of a
	// targeted job did.
	EndTime *time.Time `json:"end_time,omitempty"`
	// Success and Return are a runner job's outcome.
	Success  *bool   `json:"success,omitempty"`
	Return   any     `json:"return,omitempty"`
	Duration float64 `json:"duration,omitempty"`
	// Returns are a targeted job's minion returns, by minion id.
	Returns map[string]MinionReturn `json:"returns,omitempty"`
	// Event is the id of the new event; Cause that of the event the job
	// reacted to (reactions); Source the new event's source, which tells
	// the master (and its part) that ran the job.
	Event  string `json:"event,omitempty"`
	Cause  string `json:"cause,omitempty"`
	Source string `json:"source,omitempty"`
	// Interrupted marks a job its master stopped before it ended (a crash,
	// SIGKILL); Rerun is the job that ran the same thing again, when known.
	Interrupted bool   `json:"interrupted,omitempty"`
	Rerun       string `json:"rerun,omitempty"`
	// Steps are an orchestration's finished steps, by state key, each
	// with Salt's result fields: what `brine jobs show` shows of a run in
	// progress, and what a master resuming it does not run again.
	Steps map[string]any `json:"steps,omitempty"`
	// Revision is the record's key-value revision.
	Revision uint64 `json:"-"`
}

// MinionReturn is one minion's salt/job/<jid>/ret/<id>.
type MinionReturn struct {
	Return  any   `json:"return"`
	Retcode int64 `json:"retcode"`
	Success bool  `json:"success"`
	// Out is the outputter the function named (Salt's out: highstate for
	// the state functions), which jobs.lookup_jid hands on.
	Out  string    `json:"out,omitempty"`
	Time time.Time `json:"time"`
}

// Lookup is the job's return as Salt's jobs.lookup_jid gives it: a runner
// job's own, a targeted job's by minion id (with missing, those that did
// not return say so), wrapped in {outputter, data} when the function named
// an outputter, so that whoever prints it prints a highstate as one.
func (j *Job) Lookup(missing bool) any {
	if j.Kind != KindJob {
		return j.Return
	}
	out := make(map[string]any, len(j.Returns))
	outputter := ""
	for id, r := range j.Returns {
		out[id] = r.Return
		outputter = cmp.Or(r.Out, outputter)
	}
	if missing {
		for _, id := range j.Missing() {
			out[id] = "Minion did not return. [No response]"
		}
	}
	if outputter != "" {
		return map[string]any{"outputter": outputter, "data": out}
	}
	return out
}

// Active reports whether the job has not finished.
func (j *Job) Active() bool { return j.EndTime == nil }

// Missing lists the targeted minions that have not returned and may
// still (those the job was sent to).
func (j *Job) Missing() []string {
	var out []string
	for _, m := range j.Minions {
		if _, ok := j.Returns[m]; !ok && !slices.Contains(j.NotConnected, m) {
			out = append(out, m)
		}
	}
	return out
}

// ConfigKeys are the master configuration keys Keep reads.
var ConfigKeys = []string{"keep_jobs_seconds", "keep_jobs"}

// Keep reads how long jobs are kept: Salt's keep_jobs_seconds (3006+), else
// its older keep_jobs (hours), else DefaultKeep.
func Keep(cfg config.Decoder) (time.Duration, error) {
	var secs, hours int64
	if err := cfg.Decode("keep_jobs_seconds", &secs); err != nil {
		return 0, err
	}
	if err := cfg.Decode("keep_jobs", &hours); err != nil {
		return 0, err
	}
	switch {
	case secs < 0:
		return 0, fmt.Errorf("%s: keep_jobs_seconds %d: want a positive number of seconds", cfg.Source("keep_jobs_seconds"), secs)
	case hours < 0:
		return 0, fmt.Errorf("%s: keep_jobs %d: want a positive number of hours", cfg.Source("keep_jobs"), hours)
	case secs > 0:
		return time.Duration(secs) * time.Second, nil
	case hours > 0:
		return time.Duration(hours) * time.Hour, nil
	}
	return DefaultKeep, nil
}

// BucketConfig describes the jobs bucket, each record expiring keep
// (DefaultKeep when zero) after its last change (natsbus.Bus.Bucket opens it).
func BucketConfig(keep time.Duration) bus.BucketConfig {
	if keep <= 0 {
		keep = DefaultKeep
	}
	return bus.BucketConfig{Name: BucketName, Description: "brine jobs", TTL: keep}
}

// Bucket is the key-value storage jobs live in (*natsbus.Bucket is one).
type Bucket interface {
	Get(ctx context.Context, key string) (bus.Entry, error)
	Create(ctx context.Context, key string, value []byte) (uint64, error)
	Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error)
	List(ctx context.Context) ([]bus.Entry, error)
}

// Store records jobs from their events in a key-value bucket and answers
// queries. It is safe for concurrent use, also by several masters.
type Store struct {
	kv  Bucket
	log *slog.Logger
	// retryWait is how long a failed write's events wait before they are
	// delivered again.
	retryWait time.Duration
	// written holds the records this store wrote last, decoded (update).
	written writtenJobs
}

// writtenJobs keeps, by jid, the last few records the store wrote, as
// written: a large job's returns arrive in many batches, and decoding its
// whole record again for each batch (a thousand returns' record, over and
// over) was most of what recording the job cost the master. An entry
// serves only while the bucket still holds the revision it was written
// at, so a write by another master of a cluster, or one of ours that
// failed, sends update back to the bucket's copy.
type writtenJobs struct {
	mu   sync.Mutex
	jobs map[string]*Job
}

// maxWritten bounds writtenJobs: the jobs being recorded at one time.
const maxWritten = 64

// take removes and returns the record of jid written at revision rev, if
// it is kept: the caller changes it, and keeps it again once written.
func (w *writtenJobs) take(jid string, rev uint64) *Job {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jid]
	delete(w.jobs, jid)
	if j == nil || j.Revision != rev {
		return nil
	}
	return j
}

// keep holds j, just written, for the next update of its job.
func (w *writtenJobs) keep(j *Job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.jobs == nil {
		w.jobs = map[string]*Job{}
	}
	for k := range w.jobs {
		if len(w.jobs) < maxWritten {
			break
		}
		delete(w.jobs, k)
	}
	w.jobs[j.JID] = j
}

// NewStore wraps an open bucket (BucketConfig). log may be nil.
func NewStore(kv Bucket, log *slog.Logger) *Store {
	if log == nil {
		log = slog.Default()
	}
	return &Store{kv: kv, log: log, retryWait: time.Second}
}

// Consumer is the part of bus.Bus the store reads events from, and
// publishes its dead letters to.
type Consumer interface {
	bus.Publisher
	Consume(ctx context.Context, cfg bus.ConsumerConfig, fn func(context.Context, *bus.Delivery)) (bus.Subscription, error)
}

// Pattern selects the job events from the bus (salt/job/… and salt/run/…);
// Record ignores the few other tags it also matches.
const Pattern = "salt/[jr][ou][bn]/*"

// Run records job events from the durable consumer ConsumerName until ctx
// ends. An event that is not a usable job event is logged and skipped; a
// failed write is retried, so no job is lost, up to bus.MaxAttempts: an
// event whose record cannot be written then is dead-lettered (fired as
// bus.DeadLetterTag under source), so that no event can stop the store.
//
// Events are taken as they come and written in batches: every event of a
// job waiting when its record is written goes into that one write. A job
// of 1,000 agents would otherwise rewrite its growing record 1,000 times.
func (s *Store) Run(ctx context.Context, c Consumer, source string) error {
	b := &batch{kick: make(chan struct{}, 1), byJID: map[string][]pending{}}
	done := make(chan struct{})
	go func() { defer close(done); s.writeBatches(ctx, b, c, source) }()
	sub, err := c.Consume(ctx, bus.ConsumerConfig{Name: ConsumerName, Pattern: Pattern, MaxInFlight: maxInFlight},
		func(ctx context.Context, d *bus.Delivery) {
			je, err := parseEvent(d.Event)
			if err != nil {
				if !isOtherTag(d.Event.Tag) {
					s.log.Warn("jobs: skipping event", "tag", d.Event.Tag, "event", d.Event.ID, "err", err)
				}
				_ = d.Ack()
				return
			}
			if je.what == "prog" {
				// An orchestration's step: in its record already
				// (RecordStep, before the event was fired).
				_ = d.Ack()
				return
			}
			b.add(je, d)
		})
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	<-ctx.Done()
	sub.Stop()
	<-done
	return ctx.Err()
}

// maxInFlight bounds the job events taken but not yet written.
const maxInFlight = 8192

// pending is a job event waiting for its record to be written.
type pending struct {
	je *jobEvent
	d  *bus.Delivery
}

// batchWindow is the least time between two rounds of writes of
// writeBatches in a stream of events (the round before wrote at least
// streamEvents): the events that come meanwhile gather for the next round.
const (
	batchWindow  = 100 * time.Millisecond
	streamEvents = 8
)

// batch holds the events waiting, by job.
type batch struct {
	mu    sync.Mutex
	byJID map[string][]pending
	order []string // jobs in the order their first waiting event came
	kick  chan struct{}
}

func (b *batch) add(je *jobEvent, d *bus.Delivery) {
	b.mu.Lock()
	if _, ok := b.byJID[je.jid]; !ok {
		b.order = append(b.order, je.jid)
	}
	b.byJID[je.jid] = append(b.byJID[je.jid], pending{je, d})
	b.mu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// take removes and returns everything waiting.
func (b *batch) take() ([]string, map[string][]pending) {
	b.mu.Lock()
	defer b.mu.Unlock()
	order, by := b.order, b.byJID
	b.order, b.byJID = nil, map[string][]pending{}
	return order, by
}

// writeBatches writes each job's waiting events in one update of its
// record, then settles them: acknowledged once written, redelivered later
// when the write failed, dead-lettered when it failed bus.MaxAttempts
// times. An event the record refuses (another kind of job's, a return from
// an agent the job was not sent to) is acknowledged and logged.
func (s *Store) writeBatches(ctx context.Context, b *batch, p bus.Publisher, source string) {
	var last time.Time // when the last round of writes began
	lastN := 0         // and how many events it wrote
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.kick:
		}
		// In a stream of events, let the batch fill: each write re-encodes
		// a job's whole record, so a thousand returns written a few at a
		// time cost the master more than the returns did. A few events
		// are written at once (a record someone may check next), a
		// stream's at most batchWindow behind.
		if lastN >= streamEvents && !backoff.Sleep(ctx, time.Until(last.Add(batchWindow))) {
			return
		}
		last = time.Now()
		order, by := b.take()
		lastN = 0
		for _, evs := range by {
			lastN += len(evs)
		}
		for _, jid := range order {
			evs := by[jid]
			refused := make([]error, len(evs))
			err := s.update(ctx, jid, func(j *Job) {
				for i, p := range evs {
					refused[i] = p.je.apply(j)
				}
			})
			for i, pe := range evs {
				switch {
				case err == nil:
					if refused[i] != nil {
						s.log.Warn("jobs: event not recorded", "tag", pe.d.Event.Tag, "event", pe.d.Event.ID, "source", pe.d.Event.Source, "err", refused[i])
					}
					_ = pe.d.Ack()
				case ctx.Err() != nil:
					_ = pe.d.Nak(0)
				case pe.d.GiveUp():
					if derr := bus.DeadLetter(ctx, p, source, ConsumerName, pe.d, pe.d.Attempt, err, s.retryWait); derr != nil {
						s.log.Error("jobs: dead letter", "err", derr)
					} else {
						s.log.Error("jobs: event dead-lettered: its record could not be written", "tag", pe.d.Event.Tag,
							"event", pe.d.Event.ID, "attempts", pe.d.Attempt, "err", err)
					}
				default:
					_ = pe.d.Nak(s.retryWait)
				}
			}
			if err != nil && ctx.Err() == nil {
				s.log.Warn("jobs: recording failed; will retry", "jid", jid, "events", len(evs), "err", err)
			}
		}
	}
}

// isOtherTag reports tags the consumer pattern matches that are not job
// events at all, or that the record has no use for: an orchestration
// step's start (salt/run/<jid>/step/<n>, for people watching; its end is
// the prog event). Nothing to warn about.
func isOtherTag(tag string) bool {
	if rest, ok := strings.CutPrefix(tag, "salt/run/"); ok {
		_, after, _ := strings.Cut(rest, "/")
		return strings.HasPrefix(after, "step/")
	}
	return !strings.HasPrefix(tag, "salt/job/")
}

// ParseTag splits a job event tag: salt/run/<jid>/new|ret,
// salt/job/<jid>/new, salt/job/<jid>/ret/<minion>. ok is false for any other
// tag (including salt/job/<jid>/prog/… and …/sub/…), but an
// orchestration's salt/run/<jid>/prog/<n> (what "prog").
func ParseTag(tag string) (kind, jid, what, minion string, ok bool) {
	parts := strings.Split(tag, "/")
	if len(parts) < 4 || parts[0] != "salt" || !IsJID(parts[2]) {
		return "", "", "", "", false
	}
	kind, jid, what = parts[1], parts[2], parts[3]
	switch {
	case kind == KindRun && len(parts) == 4 && (what == "new" || what == "ret"):
		return kind, jid, what, "", true
	case kind == KindRun && len(parts) == 5 && what == "prog":
		return kind, jid, what, "", true
	case kind == KindJob && len(parts) == 4 && what == "new":
		return kind, jid, what, "", true
	case kind == KindJob && len(parts) == 5 && what == "ret" && parts[4] != "":
		return kind, jid, what, parts[4], true
	}
	return "", "", "", "", false
}

// Record merges one job event into its job's record. Events may arrive in
// any order and more than once; the record converges to the same content.
// An event the record refuses (ErrRefused) leaves it as it was.
func (s *Store) Record(ctx context.Context, ev *bus.Event) error {
	je, err := parseEvent(ev)
	if err != nil {
		return err
	}
	var refused error
	if err := s.update(ctx, je.jid, func(j *Job) { refused = je.apply(j) }); err != nil {
		return err
	}
	return refused
}

// FromEvent reads one job event on its own: the job as far as that event
// tells, what the event is ("new" or "ret") and, for a minion's return, the
// minion. Integrations that render job events (Slack) use it.
func FromEvent(ev *bus.Event) (j *Job, what, minion string, err error) {
	je, err := parseEvent(ev)
	if err != nil {
		return nil, "", "", err
	}
	j = &Job{JID: je.jid}
	je.apply(j)
	return j, je.what, je.minion, nil
}

// jobEvent is a parsed job event.
type jobEvent struct {
	kind, jid, what, minion string
	ev                      *bus.Event
	data                    map[string]any
}

func parseEvent(ev *bus.Event) (*jobEvent, error) {
	kind, jid, what, minion, ok := ParseTag(ev.Tag)
	if !ok {
		return nil, fmt.Errorf("%w: tag %q", ErrNotJobEvent, ev.Tag)
	}
	data, err := ev.DataMap()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotJobEvent, ev.Tag, err)
	}
	return &jobEvent{kind: kind, jid: jid, what: what, minion: minion, ev: ev, data: data}, nil
}

// ErrRefused reports an event its job's record does not take: one of
// another kind of job under the same jid (a return for an orchestration's
// jid), or the return of a minion the job was not sent to.
var ErrRefused = errors.New("not this job's")

// apply merges the event into j, or says why the record refuses it.
func (e *jobEvent) apply(j *Job) error {
	if j.Kind == "" {
		j.Kind = e.kind
	}
	if j.Kind != e.kind {
		return fmt.Errorf("%w: %s is a %s job, this is a %s event", ErrRefused, j.JID, kindName(j.Kind), kindName(e.kind))
	}
	switch {
	case e.what == "new":
		mergeNew(j, e.ev, e.data)
	case e.what == "prog":
		// The orchestration wrote the step into the record itself
		// (RecordStep) before firing this event.
	case e.kind == KindRun:
		mergeRunRet(j, e.ev, e.data)
	default:
		if j.Event != "" && !slices.Contains(j.Minions, e.minion) {
			return fmt.Errorf("%w: job %s was not sent to %s", ErrRefused, j.JID, e.minion)
		}
		mergeMinionRet(j, e.ev, e.minion, e.data)
	}
	return nil
}

func kindName(kind string) string {
	if kind == KindRun {
		return "runner (salt/run)"
	}
	return "targeted (salt/job)"
}

func mergeNew(j *Job, ev *bus.Event, data map[string]any) {
	j.Event = ev.ID
	j.Cause = ev.Cause
	j.Source = ev.Source
	j.StartTime = jobStart(j.JID, ev)
	fillCommon(j, data)
	if t, ok := data["tgt"]; ok {
		j.Tgt = t
	}
	if tt, ok := data["tgt_type"].(string); ok {
		j.TgtType = tt
	}
	if nc, ok := data["not_connected"].([]any); ok {
		j.NotConnected = j.NotConnected[:0]
		for _, m := range nc {
			if s, ok := m.(string); ok {
				j.NotConnected = append(j.NotConnected, s)
			}
		}
	}
	if ms, ok := data["minions"].([]any); ok {
		j.Minions = j.Minions[:0]
		for _, m := range ms {
			if s, ok := m.(string); ok {
				j.Minions = append(j.Minions, s)
			}
		}
		// A return recorded before the job's announcement, from a minion
		// it does not target, was never this job's.
		for id := range j.Returns {
			if !slices.Contains(j.Minions, id) {
				delete(j.Returns, id)
			}
		}
		j.finishIfComplete(ev.Time)
	}
}

// fillCommon copies the fields new and ret events share, without erasing
// what an earlier event set.
func fillCommon(j *Job, data map[string]any) {
	if f, ok := data["fun"].(string); ok && f != "" {
		j.Fun = f
	}
	if u, ok := data["user"].(string); ok && u != "" {
		j.User = u
	}
	for _, k := range []string{"arg", "fun_args"} {
		if a, ok := data[k].([]any); ok && j.Arg == nil {
			// Whoever sent the event, the store keeps no secret.
			j.Arg = Redact(a).([]any)
		}
	}
}

func mergeRunRet(j *Job, ev *bus.Event, data map[string]any) {
	fillCommon(j, data)
	if j.StartTime.IsZero() {
		j.StartTime = jobStart(j.JID, ev)
	}
	ok, _ := data["success"].(bool)
	j.Success = &ok
	j.Interrupted, _ = data["interrupted"].(bool)
	j.Return = Redact(data["return"])
	switch d := data["duration"].(type) {
	case float64:
		j.Duration = d
	case int64:
		j.Duration = float64(d)
	default:
		j.Duration = ev.Time.Sub(j.StartTime).Seconds()
	}
	end := ev.Time
	j.EndTime = &end
}

func mergeMinionRet(j *Job, ev *bus.Event, minion string, data map[string]any) {
	fillCommon(j, data)
	if j.StartTime.IsZero() {
		j.StartTime = jobStart(j.JID, ev)
	}
	if j.Returns == nil {
		j.Returns = map[string]MinionReturn{}
	}
	r := MinionReturn{Return: Redact(data["return"]), Time: ev.Time}
	r.Retcode, _ = data["retcode"].(int64)
	r.Out, _ = data["out"].(string)
	if ok, isBool := data["success"].(bool); isBool {
		r.Success = ok
	} else {
		r.Success = r.Retcode == 0
	}
	j.Returns[minion] = r
	if !slices.Contains(j.Minions, minion) {
		// The job's announcement is not recorded yet: the minion is
		// listed until it is (mergeNew keeps only those targeted).
		j.Minions = append(j.Minions, minion)
	}
	if tgt, ok := data["tgt"]; ok && j.Event == "" {
		// A minion's own job (salt-call), which the master gave its jid
		// when the return came (Salt's jid "req"): there is no
		// announcement, and its one return ends it.
		j.Tgt = tgt
		j.TgtType, _ = data["tgt_type"].(string)
		j.EndTime = &r.Time
		j.Duration = 0
		if t, err := JIDTime(j.JID); err == nil && r.Time.After(t) {
			j.Duration = r.Time.Sub(t).Seconds()
		}
		return
	}
	j.finishIfComplete(ev.Time)
}

// addStep keeps one finished orchestration step.
func (j *Job) addStep(tag string, ret any) {
	if j.Steps == nil {
		j.Steps = map[string]any{}
	}
	j.Steps[tag] = Redact(ret)
}

// RecordStep stores an orchestration's finished step in its job record
// at once (the step's progress event is recorded too, later, with the
// same content): a master killed after it resumes the run without the
// step.
func (s *Store) RecordStep(ctx context.Context, jid, tag string, ret map[string]any) error {
	return s.update(ctx, jid, func(j *Job) {
		if j.Kind == "" {
			j.Kind = KindRun
		}
		j.addStep(tag, ret)
	})
}

// finishIfComplete ends a targeted job once every targeted minion returned.
func (j *Job) finishIfComplete(t time.Time) {
	// Fewer returns and absentees than minions: someone is missing, known
	// without listing who (Missing is quadratic, and this runs for every
	// return of a thousand-minion job).
	if len(j.Returns)+len(j.NotConnected) < len(j.Minions) {
		return
	}
	if j.EndTime != nil || j.Event == "" || len(j.Missing()) > 0 || len(j.Returns) == 0 && len(j.Minions) > len(j.NotConnected) {
		return
	}
	end := t
	for _, r := range j.Returns {
		if r.Time.After(end) {
			end = r.Time
		}
	}
	j.EndTime = &end
	j.Duration = end.Sub(j.StartTime).Seconds()
}

// jobStart is when a job started: its JID's time, else its event's.
func jobStart(jid string, ev *bus.Event) time.Time {
	if t, err := JIDTime(jid); err == nil {
		return t
	}
	return ev.Time
}

// update applies fn to the record of jid with compare-and-set, again when
// another writer changed it in between (bus.Change).
func (s *Store) update(ctx context.Context, jid string, fn func(*Job)) error {
	_, err := bus.Change(ctx, func() (uint64, error) {
		e, err := s.entry(ctx, jid)
		var j *Job
		switch {
		case errors.Is(err, ErrNotFound):
			j = &Job{JID: jid}
		case err != nil:
			return 0, err
		default:
			if j = s.written.take(jid, e.Revision); j == nil {
				if j, err = decodeJob(e); err != nil {
					return 0, err
				}
			}
		}
		fn(j)
		b, err := json.Marshal(j)
		if err != nil {
			return 0, fmt.Errorf("jobs: encode %s: %w", jid, err)
		}
		rev, err := bus.WriteAt(ctx, s.kv, jid, b, j.Revision)
		if err != nil {
			return 0, fmt.Errorf("jobs: write %s: %w", jid, err)
		}
		j.Revision = rev
		s.written.keep(j)
		return rev, nil
	})
	return err
}

// Get returns the job jid, or ErrNotFound.
func (s *Store) Get(ctx context.Context, jid string) (*Job, error) {
	e, err := s.entry(ctx, jid)
	if err != nil {
		return nil, err
	}
	return decodeJob(e)
}

// entry is job jid's record as the bucket holds it, or ErrNotFound.
func (s *Store) entry(ctx context.Context, jid string) (bus.Entry, error) {
	if !IsJID(jid) {
		return bus.Entry{}, fmt.Errorf("%w: %q is not a JID (20 digits)", ErrNotFound, jid)
	}
	e, err := s.kv.Get(ctx, jid)
	if errors.Is(err, bus.ErrKeyNotFound) {
		return bus.Entry{}, fmt.Errorf("%w: %s (never seen, or older than keep_jobs)", ErrNotFound, jid)
	}
	if err != nil {
		return bus.Entry{}, fmt.Errorf("jobs: get %s: %w", jid, err)
	}
	return e, nil
}

func decodeJob(e bus.Entry) (*Job, error) {
	var j Job
	if err := json.Unmarshal(e.Value, &j); err != nil {
		return nil, fmt.Errorf("jobs: record %s (revision %d): %w", e.Key, e.Revision, err)
	}
	j.Revision = e.Revision
	return &j, nil
}

// Filter selects jobs in List; zero fields select everything.
type Filter struct {
	// Fun is a Salt glob on the function (e.g. "runner.cloud.*", "*state.*").
	Fun string `json:"fun,omitempty"`
	// User is the exact user.
	User string `json:"user,omitempty"`
	// Since keeps jobs started at or after it.
	Since time.Time `json:"since,omitzero"`
	// Active keeps jobs that have not finished.
	Active bool `json:"active,omitempty"`
	// Limit keeps the newest Limit jobs (0: all).
	Limit int `json:"limit,omitempty"`
}

// List returns the kept jobs f selects, oldest first.
func (s *Store) List(ctx context.Context, f Filter) ([]*Job, error) {
	entries, err := s.kv.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobs: list: %w", err)
	}
	var fun *fnmatch.Glob
	if f.Fun != "" {
		fun = fnmatch.Compile(f.Fun)
	}
	var out []*Job
	for _, e := range entries {
		j, err := decodeJob(e)
		if err != nil {
			s.log.Warn("jobs: unreadable record", "err", err)
			continue
		}
		switch {
		case fun != nil && !fun.Match(j.Fun),
			f.User != "" && j.User != f.User,
			!f.Since.IsZero() && j.StartTime.Before(f.Since),
			f.Active && !j.Active():
			continue
		}
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b *Job) int { return strings.Compare(a.JID, b.JID) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out, nil
}
