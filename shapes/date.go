package shapes

import (
	"math"
	"strconv"
	"time"

	"github.com/assaykit/assay/field"
)

// dateErr is a failed date coercion: a Pydantic error type and, for
// date_from_datetime_parsing, the parser's message.
type dateErr struct{ typ, msg string }

// Messages of the date and time parser behind Pydantic (speedate).
const (
	dtTooShort        = "input is too short"
	dtExtra           = "unexpected extra characters at the end of the input"
	dtDateTimeSep     = "invalid datetime separator, expected `T`, `t`, `_` or space"
	dtDateSep         = "invalid date separator, expected `-`"
	dtCharYear        = "invalid character in year"
	dtCharMonth       = "invalid character in month"
	dtCharDay         = "invalid character in day"
	dtTimeSep         = "invalid time separator, expected `:`"
	dtCharHour        = "invalid character in hour"
	dtCharMinute      = "invalid character in minute"
	dtCharSecond      = "invalid character in second"
	dtTzSign          = "invalid timezone sign"
	dtTzHour          = "invalid timezone hour"
	dtTzMinute        = "invalid timezone minute"
	dtRangeTzMinute   = "timezone minute value is outside expected range of 0-59"
	dtRangeTz         = "timezone offset must be less than 24 hours"
	dtRangeMonth      = "month value is outside expected range of 1-12"
	dtRangeDay        = "day value is outside expected range"
	dtRangeHour       = "hour value is outside expected range of 0-23"
	dtRangeMinute     = "minute value is outside expected range of 0-59"
	dtRangeSecond     = "second value is outside expected range of 0-59"
	dtFractionMissing = "second fraction digits missing after `.`"
	dtTooSmall        = "dates before 0000 are not supported as unix timestamps"
	dtTooLarge        = "dates after 9999 are not supported as unix timestamps"
	dtNotExact        = "Timestamp is not an exact date"
	// Python's datetime.date refuses year 0, which speedate parses: Pydantic
	// then fails with date_parsing and this message.
	pyYearZero = "year 0 is out of range"
)

const (
	msWatershed = 20_000_000_000
	unix0000    = -62_167_219_200
	unix9999    = 253_402_300_799
)

// dateFromString is Pydantic's lax str → date: an RFC 3339 date or a unix
// timestamp at midnight; failing that, a datetime (or timestamp) whose time
// is exactly midnight.
func dateFromString(s []byte) (field.Date, dateErr) {
	if d, msg := parseDate(s); msg == "" {
		return pythonDate(d)
	}
	exact, d, msg := parseDateTime(s)
	switch {
	case msg != "":
		return field.Date{}, dateErr{"date_from_datetime_parsing", msg}
	case !exact:
		return field.Date{}, dateErr{typ: "date_from_datetime_inexact"}
	}
	return pythonDate(d)
}

// pythonDate is the last step of every successful coercion: the Python
// date made of d, which cannot be in year 0.
func pythonDate(d field.Date) (field.Date, dateErr) {
	if d.Year == 0 {
		return field.Date{}, dateErr{"date_parsing", pyYearZero}
	}
	return d, dateErr{}
}

// dateFromNumber is Pydantic's lax number → date: a unix timestamp in
// seconds (milliseconds above 2e10 in magnitude) at exactly midnight.
func dateFromNumber(lit []byte, isFloat bool) (field.Date, dateErr) {
	var sec int64
	var micro uint32
	if !isFloat {
		v, big, neg := parseJSONInt(lit)
		switch {
		case big && neg:
			return field.Date{}, dateErr{"date_from_datetime_parsing", dtTooSmall}
		case big:
			return field.Date{}, dateErr{"date_from_datetime_parsing", dtTooLarge}
		}
		sec = v
	} else {
		f, _ := strconv.ParseFloat(string(lit), 64)
		switch {
		case f < -9e18: // -Inf included
			return field.Date{}, dateErr{"date_from_datetime_parsing", dtTooSmall}
		case f > 9e18: // +Inf included
			return field.Date{}, dateErr{"date_from_datetime_parsing", dtTooLarge}
		}
		_, frac := math.Modf(f)
		sec, micro = int64(math.Floor(f)), uint32(math.Round(math.Abs(frac)*1e6))
	}
	exact, d, msg := dateTimeFromTimestamp(sec, micro)
	switch {
	case msg != "":
		return field.Date{}, dateErr{"date_from_datetime_parsing", msg}
	case !exact:
		return field.Date{}, dateErr{typ: "date_from_datetime_inexact"}
	}
	return pythonDate(d)
}

// parseDate parses YYYY-MM-DD exactly, or an integer timestamp at
// midnight; msg is the parser's error.
func parseDate(s []byte) (field.Date, string) {
	d, msg := parseDatePart(s)
	if msg == "" && len(s) > 10 {
		msg = dtExtra
	}
	if msg == "" {
		return d, ""
	}
	if ts, ok := speedInt(s); ok {
		sec, micro, m := watershed(ts)
		if m != "" {
			return field.Date{}, m
		}
		d, rem, m := dateFromSeconds(sec)
		if m != "" {
			return field.Date{}, m
		}
		if rem != 0 || micro != 0 {
			return field.Date{}, dtNotExact
		}
		return d, ""
	}
	return field.Date{}, msg
}

func digitAt(s []byte, i int) (int, bool) {
	if i < len(s) && isDigit(s[i]) {
		return int(s[i] - '0'), true
	}
	return 0, false
}

// parseDatePart reads the YYYY-MM-DD at the start of s.
func parseDatePart(s []byte) (field.Date, string) {
	if len(s) < 10 {
		return field.Date{}, dtTooShort
	}
	year := 0
	for k := range 4 {
		v, ok := digitAt(s, k)
		if !ok {
			return field.Date{}, dtCharYear
		}
		year = year*10 + v
	}
	if s[4] != '-' {
		return field.Date{}, dtDateSep
	}
	m1, ok1 := digitAt(s, 5)
	m2, ok2 := digitAt(s, 6)
	if !ok1 || !ok2 {
		return field.Date{}, dtCharMonth
	}
	if s[7] != '-' {
		return field.Date{}, dtDateSep
	}
	d1, ok1 := digitAt(s, 8)
	d2, ok2 := digitAt(s, 9)
	if !ok1 || !ok2 {
		return field.Date{}, dtCharDay
	}
	month, day := m1*10+m2, d1*10+d2
	var maxDays int
	switch month {
	case 1, 3, 5, 7, 8, 10, 12:
		maxDays = 31
	case 4, 6, 9, 11:
		maxDays = 30
	case 2:
		maxDays = 28
		if isLeap(year) {
			maxDays = 29
		}
	default:
		return field.Date{}, dtRangeMonth
	}
	if day < 1 || day > maxDays {
		return field.Date{}, dtRangeDay
	}
	return field.Date{Year: year, Month: time.Month(month), Day: day}, ""
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// speedInt parses [+-]digits into an int64 (false on overflow or other
// characters); speedFloat reports a decimal with a fraction.
func speedInt(s []byte) (int64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	neg := false
	if len(s) > 1 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var v int64
	for _, c := range s {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int64(c-'0')
		if v < 0 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// speedFloat parses a timestamp with a fraction ("86400.5"): digits up
// to a dot, then [+-]?digits*.digits*([eE][+-]?digits+)?.
func speedFloat(s []byte) (float64, bool) {
	body := s
	if len(body) > 1 && (body[0] == '-' || body[0] == '+') {
		body = body[1:]
	}
	k := 0
	for k < len(body) && isDigit(body[k]) {
		k++
	}
	if k == len(body) || body[k] != '.' || !isDecimal(body) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(s), 64)
	return f, err == nil
}

// watershed splits a timestamp into seconds and microseconds; above 2e10
// in magnitude it is in milliseconds.
func watershed(ts int64) (int64, uint32, string) {
	if ts == math.MinInt64 {
		return 0, 0, dtTooSmall
	}
	abs := ts
	if abs < 0 {
		abs = -abs
	}
	if abs <= msWatershed {
		return ts, 0, ""
	}
	sec, ms := ts/1000, ts%1000
	if ms < 0 {
		sec--
		ms += 1000
	}
	return sec, uint32(ms * 1000), ""
}

// dateFromSeconds is the date of a unix time and the seconds left over.
func dateFromSeconds(sec int64) (field.Date, int64, string) {
	if sec < unix0000 {
		return field.Date{}, 0, dtTooSmall
	}
	if sec > unix9999 {
		return field.Date{}, 0, dtTooLarge
	}
	t := time.Unix(sec, 0).UTC()
	rem := sec % 86400
	if rem < 0 {
		rem += 86400
	}
	return field.DateOf(t), rem, ""
}

// dateTimeFromTimestamp reports whether a timestamp (seconds or, above
// 2e10, milliseconds, plus microseconds) is exactly midnight, and its date.
func dateTimeFromTimestamp(ts int64, micro uint32) (exact bool, d field.Date, msg string) {
	sec, extra, msg := watershed(ts)
	if msg != "" {
		return false, field.Date{}, msg
	}
	micro += extra
	if micro >= 1_000_000 {
		sec += int64(micro / 1_000_000)
		micro %= 1_000_000
	}
	d, rem, msg := dateFromSeconds(sec)
	if msg != "" {
		return false, field.Date{}, msg
	}
	return rem == 0 && micro == 0, d, ""
}

// parseDateTime parses an RFC 3339 datetime or a numeric timestamp and
// reports whether its time is exactly midnight (the zone is ignored).
func parseDateTime(s []byte) (exact bool, d field.Date, msg string) {
	d, msg = parseDatePart(s)
	if msg == "" {
		if len(s) < 11 || (s[10] != 'T' && s[10] != 't' && s[10] != ' ' && s[10] != '_') {
			msg = dtDateTimeSep
		} else {
			var zero bool
			if zero, msg = parseTime(s, 11); msg == "" {
				return zero, d, ""
			}
		}
	}
	if ts, ok := speedInt(s); ok {
		return dateTimeFromTimestamp(ts, 0)
	}
	if f, ok := speedFloat(s); ok {
		if math.Abs(f) > msWatershed {
			f /= 1000
		}
		sec := math.Floor(f)
		if math.Abs(sec) > 9e18 {
			return false, field.Date{}, dtTooLarge
		}
		return dateTimeFromTimestamp(int64(sec), uint32(math.Round((f-sec)*1e6)))
	}
	return false, field.Date{}, msg
}

// parseTime parses HH:MM[:SS[.ffffff]][Z|±HH[:]MM] at off and reports
// whether the time is 00:00:00.000000.
func parseTime(s []byte, off int) (bool, string) {
	hour, minute, msg := parseHourMinute(s, off)
	if msg != "" {
		return false, msg
	}
	pos, second, micro, msg := parseSeconds(s, off+5)
	if msg != "" {
		return false, msg
	}
	if pos < len(s) {
		if pos, msg = parseZone(s, pos); msg != "" {
			return false, msg
		}
	}
	if len(s) > pos {
		return false, dtExtra
	}
	return hour == 0 && minute == 0 && second == 0 && micro == 0, ""
}

// parseHourMinute parses HH:MM at off.
func parseHourMinute(s []byte, off int) (hour, minute int, msg string) {
	if len(s)-off < 5 {
		return 0, 0, dtTooShort
	}
	h1, ok1 := digitAt(s, off)
	h2, ok2 := digitAt(s, off+1)
	if !ok1 || !ok2 {
		return 0, 0, dtCharHour
	}
	if s[off+2] != ':' {
		return 0, 0, dtTimeSep
	}
	n1, ok1 := digitAt(s, off+3)
	n2, ok2 := digitAt(s, off+4)
	if !ok1 || !ok2 {
		return 0, 0, dtCharMinute
	}
	hour, minute = h1*10+h2, n1*10+n2
	if hour > 23 {
		return 0, 0, dtRangeHour
	}
	if minute > 59 {
		return 0, 0, dtRangeMinute
	}
	return hour, minute, ""
}

// parseSeconds parses the optional :SS[.ffffff] at pos and returns the
// index after it.
func parseSeconds(s []byte, pos int) (end, second, micro int, msg string) {
	if pos >= len(s) || s[pos] != ':' {
		return pos, 0, 0, ""
	}
	s1, ok1 := digitAt(s, pos+1)
	s2, ok2 := digitAt(s, pos+2)
	if !ok1 || !ok2 {
		return 0, 0, 0, dtCharSecond
	}
	second = s1*10 + s2
	if second > 59 {
		return 0, 0, 0, dtRangeSecond
	}
	pos += 3
	if pos < len(s) && (s[pos] == '.' || s[pos] == ',') {
		pos++
		k := 0
		for pos+k < len(s) && isDigit(s[pos+k]) {
			if k < 6 {
				micro = micro*10 + int(s[pos+k]-'0')
			}
			k++
		}
		if k == 0 {
			return 0, 0, 0, dtFractionMissing
		}
		pos += k
	}
	return pos, second, micro, ""
}

// parseZone parses the zone at pos (Z, or a sign and HH[:]MM) and returns
// the index after it.
func parseZone(s []byte, pos int) (int, string) {
	c := s[pos]
	pos++
	if c == 'Z' || c == 'z' {
		return pos, ""
	}
	switch {
	case c == '+' || c == '-':
	case c == 0xe2: // U+2212 MINUS SIGN
		if pos+1 >= len(s) || s[pos] != 0x88 || s[pos+1] != 0x92 {
			return 0, dtTzSign
		}
		pos += 2
	default:
		return 0, dtTzSign
	}
	t1, ok1 := digitAt(s, pos)
	t2, ok2 := digitAt(s, pos+1)
	if !ok1 || !ok2 {
		return 0, dtTzHour
	}
	var m1 int
	switch {
	case pos+2 < len(s) && s[pos+2] == ':':
		pos += 3
		v, ok := digitAt(s, pos)
		if !ok {
			return 0, dtTzMinute
		}
		m1 = v
	case pos+2 < len(s) && isDigit(s[pos+2]):
		pos += 2
		m1 = int(s[pos] - '0')
	default:
		return 0, dtTzMinute
	}
	m2, ok := digitAt(s, pos+1)
	if !ok {
		return 0, dtTzMinute
	}
	if m1*600+m2*60 >= 3600 {
		return 0, dtRangeTzMinute
	}
	if t1*36000+t2*3600+m1*600+m2*60 >= 24*3600 {
		return 0, dtRangeTz
	}
	return pos + 2, ""
}
