// Package field holds the value types of request fields that JSON tells
// apart and plain Go types do not, shared by the domain request types
// (claims.Request, …) and the shapes decoder without either importing the
// other:
//
//   - Date: a calendar date, written "YYYY-MM-DD".
//   - Nullable[T]: a field that may be left out (unset: the documented
//     default applies), set to null, or set to a value. The zero value is
//     unset, so a request built in Go takes the defaults of every field it
//     does not set.
//
// A plain pointer is enough for the other optional fields: nil is unset
// (the default applies) and a pointer holds an explicit value, including
// the zero value (new(false) for includeConflicts false). Nullable is for
// the fields where null is itself a value different from the default
// (claims.Request.FreshnessHours: null means no freshness requirement, the
// default is 168 hours).
package field
