package exec

import (
	"sort"

	"github.com/pkg/errors"
)

// Dict is gonja's ordered mapping, Python's dict: its keys keep the order
// they were first set in. Dict literals of a template are *Dict, and a
// caller that passes a *Dict (built with NewDict and Set) has its order
// kept by iteration, keys(), values(), items(), printing and update().
// A Go map is read in its keys' sorted order.

// Lookup is the value at key, and whether there is one; keys compare as
// Python's do (1 == 1.0 == True), a string never equal to a number.
func (d *Dict) Lookup(key any) (*Value, bool) {
	k := ToValue(key)
	for _, pair := range d.Pairs {
		if pair.Key.IsString() == k.IsString() && pair.Key.EqualValueTo(k) {
			return pair.Value, true
		}
	}
	return nil, false
}

// Set sets key to value: in its place if key is there, else at the end.
func (d *Dict) Set(key, value any) {
	k, v := ToValue(key), ToValue(value)
	for _, pair := range d.Pairs {
		if pair.Key.IsString() == k.IsString() && pair.Key.EqualValueTo(k) {
			pair.Value = v
			return
		}
	}
	d.Pairs = append(d.Pairs, &Pair{Key: k, Value: v})
}

// Delete removes key, and tells whether it was there.
func (d *Dict) Delete(key any) bool {
	k := ToValue(key)
	for i, pair := range d.Pairs {
		if pair.Key.IsString() == k.IsString() && pair.Key.EqualValueTo(k) {
			d.Pairs = append(d.Pairs[:i:i], d.Pairs[i+1:]...)
			return true
		}
	}
	return false
}

// Len is the number of keys.
func (d *Dict) Len() int { return len(d.Pairs) }

// dictMethod calls Python's dict method name on d, changing d itself as
// Python does; ok is false for a method it does not have.
func dictMethod(d *Dict, name string, args *VarArgs) (result any, ok bool, err error) {
	arity := func(least, most int) error {
		if len(args.Args) < least || len(args.Args) > most || len(args.KwArgs) > 0 && name != "update" {
			return ErrInvalidCall(errors.Errorf("%s() takes from %d to %d positional arguments but %d were given", name, least, most, len(args.Args)))
		}
		return nil
	}
	switch name {
	case "keys", "values", "items":
		if err := args.Take(); err != nil {
			return nil, true, ErrInvalidCall(err)
		}
		out := ValuesList{}
		for _, pair := range d.Pairs {
			switch name {
			case "keys":
				out = append(out, pair.Key)
			case "values":
				out = append(out, pair.Value)
			default:
				out = append(out, AsValue(Tuple{pair.Key, pair.Value}))
			}
		}
		return out, true, nil
	case "get":
		if err := arity(1, 2); err != nil {
			return nil, true, err
		}
		if value, found := d.Lookup(args.Args[0]); found {
			return value, true, nil
		}
		if len(args.Args) == 2 {
			return args.Args[1], true, nil
		}
		return nil, true, nil
	case "pop":
		if err := arity(1, 2); err != nil {
			return nil, true, err
		}
		if value, found := d.Lookup(args.Args[0]); found {
			d.Delete(args.Args[0])
			return value, true, nil
		}
		if len(args.Args) == 2 {
			return args.Args[1], true, nil
		}
		return nil, true, errors.Errorf("KeyError: %s", args.Args[0].Repr())
	case "setdefault":
		if err := arity(1, 2); err != nil {
			return nil, true, err
		}
		if value, found := d.Lookup(args.Args[0]); found {
			return value, true, nil
		}
		var def *Value = AsValue(nil)
		if len(args.Args) == 2 {
			def = args.Args[1]
		}
		d.Set(args.Args[0], def)
		return def, true, nil
	case "update":
		if err := arity(0, 1); err != nil {
			return nil, true, err
		}
		if len(args.Args) == 1 {
			other := args.Args[0]
			if other.IsDict() {
				other.Iterate(func(_, _ int, key, value *Value) bool {
					d.Set(key, value)
					return true
				}, func() {})
			} else {
				var err error
				other.Iterate(func(_, _ int, item, _ *Value) bool {
					if !item.IsList() || item.Len() != 2 {
						err = errors.New("dictionary update sequence element has wrong length; 2 is required")
						return false
					}
					d.Set(item.Index(0), item.Index(1))
					return true
				}, func() {})
				if err != nil {
					return nil, true, err
				}
			}
		}
		for _, key := range args.KeywordNames() {
			d.Set(key, args.KwArgs[key])
		}
		return nil, true, nil
	case "copy":
		if err := args.Take(); err != nil {
			return nil, true, ErrInvalidCall(err)
		}
		clone := NewDict()
		for _, pair := range d.Pairs {
			clone.Pairs = append(clone.Pairs, &Pair{Key: pair.Key, Value: pair.Value})
		}
		return clone, true, nil
	case "clear":
		if err := args.Take(); err != nil {
			return nil, true, ErrInvalidCall(err)
		}
		d.Pairs = []*Pair{}
		return nil, true, nil
	case "popitem":
		if err := args.Take(); err != nil {
			return nil, true, ErrInvalidCall(err)
		}
		if len(d.Pairs) == 0 {
			return nil, true, errors.New("KeyError: 'popitem(): dictionary is empty'")
		}
		last := d.Pairs[len(d.Pairs)-1]
		d.Pairs = d.Pairs[:len(d.Pairs)-1]
		return AsValue(Tuple{last.Key, last.Value}), true, nil
	}
	return nil, false, nil
}

func sortedKeys(m map[string]*Value) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// dictFromkeys is Python's dict.fromkeys(iterable, value=None): a new
// dict of the keys in their order, each with value.
func dictFromkeys(args *VarArgs) (*Dict, error) {
	if len(args.Args) < 1 || len(args.Args) > 2 || len(args.KwArgs) > 0 {
		return nil, ErrInvalidCall(errors.Errorf("fromkeys expected at least 1 argument, got %d", len(args.Args)))
	}
	value := AsValue(nil)
	if len(args.Args) == 2 {
		value = args.Args[1]
	}
	keys := args.Args[0]
	if !keys.IsIterable() {
		return nil, errors.Errorf("'%s' object is not iterable", keys.TypeName())
	}
	out := NewDict()
	keys.Iterate(func(_, _ int, key, _ *Value) bool {
		out.Set(key, value)
		return true
	}, func() {})
	return out, nil
}
