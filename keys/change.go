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

// AcceptKey records pub (either kind, see ValidatePub) as the accepted key
// of id, whatever the id had: salt-cloud's preseeded keys, for an agent
// whose key pair was made for it. As in Salt, no salt/key event is fired.
func (s *Store) AcceptKey(ctx context.Context, id, pub string) error {
	if err := validateID(id); err != nil {
		return err
	}
	pub = NormalizePub(pub)
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

// From lists the states act (accept, reject or delete) moves keys from,
// as salt-key does: pending keys; with includeOther the rejected keys an
// accept takes or the accepted keys a reject takes; with includeDenied the
// denied ones. A delete takes every state.
func From(act string, includeOther, includeDenied bool) []State {
	if act == ActDelete {
		return []State{Accepted, Pending, Rejected, Denied}
	}
	from := []State{Pending}
	switch {
	case includeOther && act == ActAccept:
		from = append(from, Rejected)
	case includeOther && act == ActReject:
		from = append(from, Accepted)
	}
	if includeDenied {
		from = append(from, Denied)
	}
	return from
}

// Chosen keeps the lists of found (key.name_match's answer) of the states
// in from: the keys a change taking keys from those states would change,
// which salt-key shows before it asks "Proceed?".
func Chosen(found Listing, from []State) Listing {
	out := Listing{}
	for _, st := range from {
		if ids := found[ListName(st)]; len(ids) > 0 {
			out[ListName(st)] = ids
		}
	}
	return out
}

// DictCall is the wheel call (key.<act>_dict) that changes exactly the
// keys chosen, with act's include flags: naming them rather than matching
// the glob again, a key that arrived after they were shown is not changed
// unseen.
func DictCall(act string, chosen Listing, includeOther, includeDenied bool) (fun string, kwargs map[string]any) {
	kwargs = map[string]any{"match": chosen}
	switch act {
	case ActAccept:
		kwargs["include_rejected"], kwargs["include_denied"] = includeOther, includeDenied
	case ActReject:
		kwargs["include_accepted"], kwargs["include_denied"] = includeOther, includeDenied
	}
	return "key." + act + "_dict", kwargs
}

func (s *Store) accept(ctx context.Context, fire fireFunc, sel selection, includeRejected, includeDenied bool) (Listing, error) {
	return s.change(ctx, fire, sel, ActAccept, From(ActAccept, includeRejected, includeDenied), moveTo(Accepted))
}

func (s *Store) reject(ctx context.Context, fire fireFunc, sel selection, includeAccepted, includeDenied bool) (Listing, error) {
	return s.change(ctx, fire, sel, ActReject, From(ActReject, includeAccepted, includeDenied), moveTo(Rejected))
}

func (s *Store) delete(ctx context.Context, fire fireFunc, sel selection) (Listing, error) {
	return s.change(ctx, fire, sel, ActDelete, From(ActDelete, false, false), func(cur *Key, st State) {
		if st == Denied {
			cur.Denied = nil
		} else {
			cur.State, cur.Pub = "", ""
		}
	})
}

// moveTo changes a key's state to to; a denied key (the first recorded,
// as in Salt) becomes the id's key and the other denied keys are dropped.
func moveTo(to State) func(cur *Key, st State) {
	return func(cur *Key, st State) {
		if st == Denied {
			cur.Pub, cur.Denied = cur.Denied[0], nil
		}
		cur.State = to
	}
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
		if ListState(list) == "" {
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

// change applies edit to the keys sel selects in the from states, firing
// salt/key with act for each key changed. A key whose record is no longer
// in that state (another master changed it in between) is left as it is.
func (s *Store) change(ctx context.Context, fire fireFunc, sel selection, act string, from []State, edit func(cur *Key, st State)) (Listing, error) {
	matches, err := s.resolve(ctx, sel)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, st := range from {
		for _, id := range matches[ListName(st)] {
			changed := false
			_, err := s.update(ctx, id, func(cur *Key) (*Key, error) {
				changed = cur != nil && (st == Denied && len(cur.Denied) > 0 || st != Denied && cur.State == st)
				if !changed {
					return nil, nil
				}
				edit(cur, st)
				return cur, nil
			})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if changed {
				s.log.Info("keys: key "+pastTense[act], "id", id, "was", st)
				errs = append(errs, s.fireKey(ctx, fire, act, id))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s.after(ctx, sel)
}

// pastTense names what a change did, for the log.
var pastTense = map[string]string{ActAccept: "accepted", ActReject: "rejected", ActDelete: "deleted"}

// fireKey fires salt/key for a change already stored: an error says the
// change was made but reactions will not hear of it.
func (s *Store) fireKey(ctx context.Context, fire fireFunc, act, id string) error {
	if err := fire(ctx, TagKey, map[string]any{"act": act, "id": id, "result": true}); err != nil {
		return fmt.Errorf("keys: %s of %s done, but salt/key not fired: %w", act, id, err)
	}
	return nil
}
