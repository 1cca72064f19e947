package field

import (
	"fmt"
	"time"
)

// Date is a calendar date without time or zone, written "YYYY-MM-DD".
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf returns the calendar date of t in t's location.
func DateOf(t time.Time) Date { return Date{t.Year(), t.Month(), t.Day()} }

// String returns the date as YYYY-MM-DD.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// Time returns midnight UTC at the start of the date.
func (d Date) Time() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// MarshalJSON writes "YYYY-MM-DD".
func (d Date) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// UnmarshalJSON reads "YYYY-MM-DD". shapes.Decode accepts more (Pydantic's
// lax forms); this method serves plain encoding/json round trips.
func (d *Date) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("field: date must be a string")
	}
	s := string(b[1 : len(b)-1])
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return fmt.Errorf("field: invalid date %q", s)
	}
	*d = DateOf(t)
	return nil
}
