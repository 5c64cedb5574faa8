package exec

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/pkg/errors"
)

// TypeName is the name of Python's type for the value: NoneType, bool,
// int, float, str, list, tuple, dict, or the Go type's name.
func (v *Value) TypeName() string {
	if v == nil || v.IsNil() {
		return "NoneType"
	}
	switch {
	case v.IsError():
		return "error"
	case v.IsBool():
		return "bool"
	case v.IsInteger():
		return "int"
	case v.IsFloat():
		return "float"
	case v.IsString():
		return "str"
	case v.IsTuple():
		return "tuple"
	case v.IsList():
		return "list"
	case v.IsDict():
		return "dict"
	case v.IsCallable():
		return "function"
	}
	return v.getResolvedValue().Type().String()
}

// IsTuple is true for a Tuple, the value of (a, b) in a template.
func (v *Value) IsTuple() bool {
	resolved := v.getResolvedValue()
	return resolved.IsValid() && resolved.Type() == typeTuple
}

var (
	typeTuple      = reflect.TypeFor[Tuple]()
	typeValuesList = reflect.TypeFor[ValuesList]()
)

// Tuple is Python's tuple: a list that prints as (a, b).
type Tuple []*Value

// PercentFormat is Python's printf-style string formatting, format % args:
// args is a tuple of values, a mapping for %(name)s, or one value.
func PercentFormat(format string, args *Value) (string, error) {
	var positional []*Value
	var mapping *Value
	switch {
	case args.IsTuple():
		args.Iterate(func(_, _ int, item, _ *Value) bool {
			positional = append(positional, item)
			return true
		}, func() {})
	case args.IsDict():
		mapping = args
		positional = []*Value{args}
	default:
		positional = []*Value{args}
	}
	used := 0
	next := func() (*Value, error) {
		if used >= len(positional) {
			return nil, errors.New("not enough arguments for format string")
		}
		used++
		return positional[used-1], nil
	}
	var out strings.Builder
	usedMapping := false
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			out.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			return "", errors.New("incomplete format")
		}
		var arg *Value
		if format[i] == '(' {
			end := strings.IndexByte(format[i:], ')')
			if end < 0 {
				return "", errors.New("incomplete format key")
			}
			if mapping == nil {
				return "", errors.New("format requires a mapping")
			}
			key := format[i+1 : i+end]
			item, ok := mapping.GetItem(key)
			if !ok {
				return "", errors.Errorf("KeyError: '%s'", key)
			}
			arg = item
			usedMapping = true
			i += end + 1
		}
		start := i
		for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
			i++
		}
		flags := format[start:i]
		width, precision := "", ""
		if i < len(format) && format[i] == '*' {
			w, err := next()
			if err != nil {
				return "", err
			}
			width = strconv.Itoa(w.Integer())
			i++
		} else {
			for start = i; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
			}
			width = format[start:i]
		}
		if i < len(format) && format[i] == '.' {
			i++
			for start = i; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
			}
			precision = "." + format[start:i]
			if precision == "." {
				precision = ".0"
			}
		}
		for i < len(format) && strings.IndexByte("hlL", format[i]) >= 0 {
			i++
		}
		if i >= len(format) {
			return "", errors.New("incomplete format")
		}
		verb := format[i]
		if verb == '%' {
			out.WriteByte('%')
			continue
		}
		if arg == nil {
			var err error
			if arg, err = next(); err != nil {
				return "", err
			}
		}
		spec := "%" + flags + width + precision
		switch verb {
		case 's', 'r', 'a':
			text := arg.PyString()
			if verb != 's' {
				text = arg.Repr()
			}
			out.WriteString(fmt.Sprintf("%"+strings.ReplaceAll(strings.ReplaceAll(flags, "0", ""), "#", "")+width+precision+"s", text))
		case 'd', 'i', 'u':
			if !arg.IsNumber() && !arg.IsBool() {
				return "", errors.Errorf("%%%c format: a real number is required, not %s", verb, arg.TypeName())
			}
			out.WriteString(fmt.Sprintf(spec+"d", pyInt(arg)))
		case 'x', 'X', 'o':
			if !arg.IsInteger() && !arg.IsBool() {
				return "", errors.Errorf("%%%c format: an integer is required, not %s", verb, arg.TypeName())
			}
			out.WriteString(fmt.Sprintf(spec+string(verb), pyInt(arg)))
		case 'e', 'E', 'f', 'F', 'g', 'G':
			if !arg.IsNumber() && !arg.IsBool() {
				return "", errors.Errorf("must be real number, not %s", arg.TypeName())
			}
			if precision == "" {
				spec += ".6"
			}
			out.WriteString(fmt.Sprintf(spec+string(verb), arg.Float()))
		case 'c':
			if arg.IsString() {
				out.WriteString(fmt.Sprintf("%"+flags+width+"s", arg.String()))
			} else {
				out.WriteString(fmt.Sprintf("%"+flags+width+"c", rune(arg.Integer())))
			}
		default:
			return "", errors.Errorf("unsupported format character '%c' (0x%x) at index %d", verb, verb, i)
		}
	}
	if used < len(positional) && !usedMapping && mapping == nil {
		return "", errors.New("not all arguments converted during string formatting")
	}
	return out.String(), nil
}

func pyInt(v *Value) int {
	if v.IsBool() {
		if v.Bool() {
			return 1
		}
		return 0
	}
	return v.Integer()
}

// PyString is Python's str() of the value: None, True, 1.0, and the
// repr of lists, tuples and dicts.
func (v *Value) PyString() string {
	if v == nil || v.IsNil() {
		return "None"
	}
	resolved := v.getResolvedValue()
	switch resolved.Kind() {
	case reflect.String:
		return resolved.String()
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Bool, reflect.Float32, reflect.Float64:
		return v.Repr()
	case reflect.Struct:
		if resolved.Type() == TypeDict {
			return v.Repr()
		}
	}
	return v.String()
}

// Repr is Python's repr() of the value: strings quoted as Python quotes
// them ('a', "it's"), None, True, 1.0, (1,), [1, 2], {'a': 1}.
func (v *Value) Repr() string {
	var out strings.Builder
	v.writeRepr(&out)
	return out.String()
}

func (v *Value) writeRepr(out *strings.Builder) {
	if v == nil || v.IsNil() {
		out.WriteString("None")
		return
	}
	if v.Val.Type() == typeOfValuePtr {
		ToValue(v.Val).writeRepr(out)
		return
	}
	resolved := v.getResolvedValue()
	switch resolved.Kind() {
	case reflect.String:
		out.WriteString(PyQuote(resolved.String()))
		return
	case reflect.Bool:
		if resolved.Bool() {
			out.WriteString("True")
		} else {
			out.WriteString("False")
		}
		return
	case reflect.Float32, reflect.Float64:
		out.WriteString(pyFloat(resolved.Float()))
		return
	case reflect.Slice, reflect.Array:
		if resolved.Type().Elem().Kind() == reflect.Uint8 {
			break
		}
		// a slice type of its own that prints itself, as a filter's tuple
		if t := resolved.Type(); t != typeTuple && t != typeValuesList && t.PkgPath() != "" && resolved.CanInterface() {
			if stringer, ok := resolved.Interface().(fmt.Stringer); ok {
				out.WriteString(stringer.String())
				return
			}
		}
		open, end := "[", "]"
		if resolved.Type() == typeTuple {
			open, end = "(", ")"
		}
		out.WriteString(open)
		for i := 0; i < resolved.Len(); i++ {
			if i > 0 {
				out.WriteString(", ")
			}
			ToValue(resolved.Index(i)).writeRepr(out)
		}
		if resolved.Type() == typeTuple && resolved.Len() == 1 {
			out.WriteString(",")
		}
		out.WriteString(end)
		return
	case reflect.Map, reflect.Struct:
		if !v.IsDict() {
			break
		}
		out.WriteString("{")
		first := true
		v.Iterate(func(_, _ int, key, value *Value) bool {
			if !first {
				out.WriteString(", ")
			}
			first = false
			key.writeRepr(out)
			out.WriteString(": ")
			value.writeRepr(out)
			return true
		}, func() {})
		out.WriteString("}")
		return
	}
	out.WriteString(v.String())
}

// PyQuote quotes s as Python's repr of a string does: in single quotes,
// or double quotes when s holds a single quote and no double one.
func PyQuote(s string) string {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var out strings.Builder
	out.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			out.WriteByte('\\')
			out.WriteRune(r)
		case r == '\n':
			out.WriteString(`\n`)
		case r == '\r':
			out.WriteString(`\r`)
		case r == '\t':
			out.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&out, `\x%02x`, r)
		case r < 0x7f || unicode.IsPrint(r):
			out.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&out, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&out, `\u%04x`, r)
		default:
			fmt.Fprintf(&out, `\U%08x`, r)
		}
	}
	out.WriteByte(quote)
	return out.String()
}

// pyFloat is Python's repr of a float: 1.0, 0.1, 1e+16, 1.5e-05, inf.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return formatFloatString(f)
}

func (t Tuple) String() string {
	return AsValue(t).Repr()
}

// UndefinedError is the value of an undefined name, attribute or item
// when the environment's StrictUndefined is on, as Jinja's StrictUndefined:
// any use of it fails with its message, while `is defined`, the default
// filter and {% set %} take it as it is.
type UndefinedError struct {
	Message string
}

func (u *UndefinedError) Error() string { return u.Message }

// Undefined is the value of a name that is not defined.
func Undefined(name string) *Value {
	return AsValue(&UndefinedError{Message: fmt.Sprintf("'%s' is undefined", name)})
}

// UndefinedMember is the value of obj's missing attribute or item name,
// with Jinja's message: 'dict object' has no attribute 'x', list object
// has no element 5.
func UndefinedMember(obj *Value, name any) *Value {
	typeRepr := "None"
	if obj != nil && !obj.IsNil() {
		typeRepr = obj.TypeName() + " object"
	}
	if s, ok := name.(string); ok {
		return AsValue(&UndefinedError{Message: fmt.Sprintf("%s has no attribute %s", PyQuote(typeRepr), PyQuote(s))})
	}
	return AsValue(&UndefinedError{Message: fmt.Sprintf("%s has no element %s", typeRepr, ToValue(name).Repr())})
}

// IsUndefined is true for the value of something undefined (with
// StrictUndefined), not for an error in using it.
func (v *Value) IsUndefined() bool {
	if v == nil || !v.Val.IsValid() || !v.Val.CanInterface() {
		return false
	}
	_, ok := v.Val.Interface().(*UndefinedError)
	return ok
}

// Unwrap gives the error a value holds, so that errors.As finds an
// UndefinedError or a caller's error through gonja's wrapping.
func (v *Value) Unwrap() error {
	if v == nil || !v.Val.IsValid() || !v.Val.CanInterface() {
		return nil
	}
	err, _ := v.Val.Interface().(error)
	return err
}
