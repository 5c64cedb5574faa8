package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Salt's strftime and date_format (salt/utils/dateutils.py): a date as
// Salt casts it (None is now; a number or a string of digits is a Unix
// timestamp, in local time), formatted with C's strftime directives.

// dateCast is Salt's date_cast without timelib, which Salt's packages do
// not ship: other strings are refused with Salt's message.
func dateCast(v any) (time.Time, error) {
	fail := pyErr("Unable to parse %s. Consider installing timelib", jinjaStr(v))
	var ts float64
	switch t := v.(type) {
	case nil:
		return time.Now(), nil
	case time.Time:
		return t, nil
	case string:
		if t != "" && strings.Trim(t, "0123456789") == "" {
			n, err := strconv.ParseInt(t, 10, 64)
			if err != nil {
				return time.Time{}, fail
			}
			ts = float64(n)
		} else if f, ok := pyParseFloat(t); ok {
			ts = f
		} else {
			return time.Time{}, fail
		}
	default:
		f, ok := asFloat(v)
		if !ok {
			return time.Time{}, fail
		}
		ts = f
	}
	if math.IsNaN(ts) || math.IsInf(ts, 0) {
		return time.Time{}, fail
	}
	sec, frac := math.Modf(ts)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000), nil
}

func filterStrftime(in any, args []any) (any, error) {
	t, err := dateCast(in)
	if err != nil {
		return nil, err
	}
	return strftime(t, jinjaStr(args[0])), nil
}

var (
	shortDays   = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	shortMonths = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

// strftime formats t as C's strftime (glibc, C locale) does.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		d := format[i]
		// glibc's flags: %-d drops the padding.
		noPad := false
		if d == '-' && i+1 < len(format) {
			noPad = true
			i++
			d = format[i]
		}
		num := func(n, width int) {
			if noPad {
				b.WriteString(strconv.Itoa(n))
				return
			}
			fmt.Fprintf(&b, "%0*d", width, n)
		}
		space := func(n int) {
			if noPad {
				b.WriteString(strconv.Itoa(n))
				return
			}
			fmt.Fprintf(&b, "%2d", n)
		}
		hour12 := t.Hour() % 12
		if hour12 == 0 {
			hour12 = 12
		}
		switch d {
		case 'a':
			b.WriteString(shortDays[t.Weekday()])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			b.WriteString(strconv.Itoa(wd))
		case 'd':
			num(t.Day(), 2)
		case 'e':
			space(t.Day())
		case 'b', 'h':
			b.WriteString(shortMonths[t.Month()-1])
		case 'B':
			b.WriteString(t.Month().String())
		case 'm':
			num(int(t.Month()), 2)
		case 'y':
			num(t.Year()%100, 2)
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'C':
			num(t.Year()/100, 2)
		case 'H':
			num(t.Hour(), 2)
		case 'k':
			space(t.Hour())
		case 'I':
			num(hour12, 2)
		case 'l':
			space(hour12)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'P':
			if t.Hour() < 12 {
				b.WriteString("am")
			} else {
				b.WriteString("pm")
			}
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'j':
			num(t.YearDay(), 3)
		case 'U':
			num((t.YearDay()+6-int(t.Weekday()))/7, 2)
		case 'W':
			num((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2)
		case 'G':
			y, _ := t.ISOWeek()
			b.WriteString(strconv.Itoa(y))
		case 'g':
			y, _ := t.ISOWeek()
			num(y%100, 2)
		case 'V':
			_, w := t.ISOWeek()
			num(w, 2)
		case 'c':
			b.WriteString(strftime(t, "%a %b %e %H:%M:%S %Y"))
		case 'x', 'D':
			b.WriteString(strftime(t, "%m/%d/%y"))
		case 'X', 'T':
			b.WriteString(strftime(t, "%H:%M:%S"))
		case 'F':
			b.WriteString(strftime(t, "%Y-%m-%d"))
		case 'R':
			b.WriteString(strftime(t, "%H:%M"))
		case 'r':
			b.WriteString(strftime(t, "%I:%M:%S %p"))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(d)
		}
	}
	return b.String()
}
