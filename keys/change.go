package keys

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// fireFunc fires an event: bus.Emitter.Fire, or a function call's
// function.Input.Fire, which links the event to the reaction's cause.
type fireFunc = func(ctx context.Context, tag string, data map[string]any) error

// selection is what a change applies to: the ids a glob match selects
// (Salt's match), or lists of ids as salt-key printed them (match_dict).
type selection struct {
	match any
	dict  Listing
}

// Accept accepts the pending keys match selects (globs, comma-separated),
// and with includeRejected their rejected keys, with includeDenied their
// denied key (the first recorded, as in Salt: it replaces the id's key and
// the other denied keys are dropped). It fires salt/key {act: accept} for
// each and returns where the keys match selects are now (Salt's key.accept).
func (s *Store) Accept(ctx context.Context, match string, includeRejected, includeDenied bool) (Listing, error) {
	return s.accept(ctx, s.events.Fire, selection{match: match}, includeRejected, includeDenied)
}

// AcceptDict is Accept of the ids listed by list name, as Salt's
// key.accept_dict (e.g. {"minions_pre": ["web1"]}).
func (s *Store) AcceptDict(ctx context.Context, match Listing, includeRejected, includeDenied bool) (Listing, error) {
	return s.accept(ctx, s.events.Fire, selection{dict: match}, includeRejected, includeDenied)
}

// Reject rejects the pending keys match selects, and with includeAccepted
// their accepted keys, with includeDenied their denied key; it fires
// salt/key {act: reject} for each (Salt's key.reject).
func (s *Store) Reject(ctx context.Context, match string, includeAccepted, includeDenied bool) (Listing, error) {
	return s.reject(ctx, s.events.Fire, selection{match: match}, includeAccepted, includeDenied)
}

// RejectDict is Reject of the ids listed by list name (key.reject_dict).
func (s *Store) RejectDict(ctx context.Context, match Listing, includeAccepted, includeDenied bool) (Listing, error) {
	return s.reject(ctx, s.events.Fire, selection{dict: match}, includeAccepted, includeDenied)
}

// Delete removes the keys match selects in every state, denied keys
// included, firing salt/key {act: delete} for each list an id was in
// (Salt's key.delete); an agent must say hello again, and is pending.
func (s *Store) Delete(ctx context.Context, match string) (Listing, error) {
	return s.delete(ctx, s.events.Fire, selection{match: match})
}

// DeleteDict is Delete of the ids listed by list name (key.delete_dict):
// {"minions_denied": ["web1"]} removes web1's denied keys only.
func (s *Store) DeleteDict(ctx context.Context, match Listing) (Listing, error) {
	return s.delete(ctx, s.events.Fire, selection{dict: match})
}

// AcceptKey records pub as the accepted key of id, whatever the id had:
// salt-cloud's preseeded keys, for an agent whose key pair was made for it.
// As in Salt, no salt/key event is fired.
func (s *Store) AcceptKey(ctx context.Context, id, pub string) error {
	if err := validateID(id); err != nil {
		return err
	}
	if err := ValidatePub(pub); err != nil {
		return fmt.Errorf("keys: %s: %w", id, err)
	}
	_, err := s.update(ctx, id, func(cur *Key) (*Key, error) {
		if cur == nil {
			cur = &Key{}
		} else if cur.State == Accepted && cur.Pub == pub {
			return nil, nil
		}
		cur.State, cur.Pub = Accepted, pub
		cur.Denied = slices.DeleteFunc(cur.Denied, func(d string) bool { return d == pub })
		return cur, nil
	})
	return err
}

func (s *Store) accept(ctx context.Context, fire fireFunc, sel selection, includeRejected, includeDenied bool) (Listing, error) {
	from := []State{Pending}
	if includeRejected {
		from = append(from, Rejected)
	}
	if includeDenied {
		from = append(from, Denied)
	}
	return s.changeState(ctx, fire, sel, Accepted, ActAccept, from)
}

func (s *Store) reject(ctx context.Context, fire fireFunc, sel selection, includeAccepted, includeDenied bool) (Listing, error) {
	from := []State{Pending}
	if includeAccepted {
		from = append(from, Accepted)
	}
	if includeDenied {
		from = append(from, Denied)
	}
	return s.changeState(ctx, fire, sel, Rejected, ActReject, from)
}

// resolve returns the ids of sel by list. A match_dict's entries may be
// globs: each selects the ids of its own list.
func (s *Store) resolve(ctx context.Context, sel selection) (Listing, error) {
	if sel.dict == nil {
		return s.nameMatch(ctx, sel.match)
	}
	cur, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := Listing{}
	for list, globs := range sel.dict {
		if listState(list) == "" {
			return nil, fmt.Errorf("keys: no key list %q (want %s, %s, %s or %s)", list, ListAccepted, ListDenied, ListPending, ListRejected)
		}
		if len(globs) == 0 {
			continue
		}
		keep, err := matcher(globs)
		if err != nil {
			return nil, err
		}
		for _, id := range cur[list] {
			if keep(id) {
				out[list] = append(out[list], id)
			}
		}
	}
	return out, nil
}

// after is what a change returns: where the keys sel names are now.
func (s *Store) after(ctx context.Context, sel selection) (Listing, error) {
	if sel.dict == nil {
		return s.nameMatch(ctx, sel.match)
	}
	return s.dictMatch(ctx, sel.dict)
}

// changeState moves the selected keys in the from states to state to,
// firing salt/key with act for each key moved. A key whose record changed
// in between (another master moved it) is left as it is now.
func (s *Store) changeState(ctx context.Context, fire fireFunc, sel selection, to State, act string, from []State) (Listing, error) {
	matches, err := s.resolve(ctx, sel)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, st := range from {
		for _, id := range matches[ListName(st)] {
			moved := false
			_, err := s.update(ctx, id, func(cur *Key) (*Key, error) {
				moved = false
				switch {
				case cur == nil:
					return nil, nil
				case st == Denied:
					if len(cur.Denied) == 0 {
						return nil, nil
					}
					cur.Pub, cur.Denied = cur.Denied[0], nil
				case cur.State != st:
					return nil, nil
				}
				cur.State = to
				moved = true
				return cur, nil
			})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if moved {
				s.log.Info("keys: key "+act+"ed", "id", id, "was", st)
				errs = append(errs, s.fireKey(ctx, fire, act, id))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s.after(ctx, sel)
}

func (s *Store) delete(ctx context.Context, fire fireFunc, sel selection) (Listing, error) {
	matches, err := s.resolve(ctx, sel)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, st := range []State{Pending, Rejected, Accepted, Denied} {
		for _, id := range matches[ListName(st)] {
			removed := false
			_, err := s.update(ctx, id, func(cur *Key) (*Key, error) {
				removed = false
				switch {
				case cur == nil:
					return nil, nil
				case st == Denied:
					if len(cur.Denied) == 0 {
						return nil, nil
					}
					cur.Denied = nil
				case cur.State != st:
					return nil, nil
				default:
					cur.State, cur.Pub = "", ""
				}
				removed = true
				return cur, nil
			})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if removed {
				s.log.Info("keys: key deleted", "id", id, "was", st)
				errs = append(errs, s.fireKey(ctx, fire, "delete", id))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s.after(ctx, sel)
}

// fireKey fires salt/key for a change already stored: an error says the
// change was made but reactions will not hear of it.
func (s *Store) fireKey(ctx context.Context, fire fireFunc, act, id string) error {
	if err := fire(ctx, TagKey, map[string]any{"act": act, "id": id, "result": true}); err != nil {
		return fmt.Errorf("keys: %s of %s done, but salt/key not fired: %w", act, id, err)
	}
	return nil
}
