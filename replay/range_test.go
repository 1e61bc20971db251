package replay

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func off(n int64) Bound { return Bound{Kind: BoundOffset, Offset: n} }
func at(t time.Time) Bound {
	return Bound{Kind: BoundTime, Time: t}
}

func TestParseRange(t *testing.T) {
	earliest := Bound{Kind: BoundEarliest}
	latest := Bound{Kind: BoundLatest}
	t10 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want RangeSpec
	}{
		{"events:0:100-200", RangeSpec{Topic: "events", Partitions: []int32{0}, From: off(100), Until: off(200)}},
		{"  events:0:100-200 ", RangeSpec{Topic: "events", Partitions: []int32{0}, From: off(100), Until: off(200)}},
		{"events:0:100-100", RangeSpec{Topic: "events", Partitions: []int32{0}, From: off(100), Until: off(100)}},
		{"events:*:earliest-latest", RangeSpec{Topic: "events", From: earliest, Until: latest}},
		{"events:*:EARLIEST-Latest", RangeSpec{Topic: "events", From: earliest, Until: latest}},
		{"a.b_c-d:3,1,2:0-latest", RangeSpec{Topic: "a.b_c-d", Partitions: []int32{3, 1, 2}, From: off(0), Until: latest}},
		{"events:1:@2026-11-29T10:00:00Z-@-5m", RangeSpec{Topic: "events", Partitions: []int32{1},
			From: at(t10), Until: at(testNow.Add(-5 * time.Minute))}},
		{"events:1:@2026-11-29T11:00:00+01:00-latest", RangeSpec{Topic: "events", Partitions: []int32{1},
			From: at(t10), Until: latest}},
		{"events:1:@2026-11-29T05:00:00-05:00-100", RangeSpec{Topic: "events", Partitions: []int32{1},
			From: at(t10), Until: off(100)}},
		{"events:1:@-1h-@-0s", RangeSpec{Topic: "events", Partitions: []int32{1},
			From: at(testNow.Add(-time.Hour)), Until: at(testNow)}},
		{"events:1:@-90m-@2026-11-29T11:00:00.5Z", RangeSpec{Topic: "events", Partitions: []int32{1},
			From: at(testNow.Add(-90 * time.Minute)), Until: at(time.Date(2026, 11, 29, 11, 0, 0, 5e8, time.UTC))}},
		{"events:0:earliest-@2026-11-29T10:00:00Z", RangeSpec{Topic: "events", Partitions: []int32{0}, From: earliest, Until: at(t10)}},
		{"events:0:50-@-5m", RangeSpec{Topic: "events", Partitions: []int32{0}, From: off(50), Until: at(testNow.Add(-5 * time.Minute))}},
		// Mixed forms are checked once resolved, not here.
		{"events:0:500-@-5m", RangeSpec{Topic: "events", Partitions: []int32{0}, From: off(500), Until: at(testNow.Add(-5 * time.Minute))}},
		{"events:2147483647:0-9223372036854775807", RangeSpec{Topic: "events", Partitions: []int32{2147483647}, From: off(0), Until: off(9223372036854775807)}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRange(tc.in, testNow)
			if err != nil {
				t.Fatalf("ParseRange(%q): %v", tc.in, err)
			}
			tc.want.Text = strings.TrimSpace(tc.in)
			if !specEqual(got, tc.want) {
				t.Fatalf("ParseRange(%q)\n got %+v\nwant %+v", tc.in, got, tc.want)
			}
			again, err := ParseRange(got.String(), testNow)
			if err != nil {
				t.Fatalf("ParseRange(String() = %q): %v", got.String(), err)
			}
			again.Text = got.Text
			if !specEqual(again, got) {
				t.Fatalf("round trip through %q\n got %+v\nwant %+v", got.String(), again, got)
			}
		})
	}
}

func specEqual(a, b RangeSpec) bool {
	return a.Topic == b.Topic && reflect.DeepEqual(a.Partitions, b.Partitions) &&
		boundEqual(a.From, b.From) && boundEqual(a.Until, b.Until) && a.Text == b.Text
}

func boundEqual(a, b Bound) bool {
	return a.Kind == b.Kind && a.Offset == b.Offset && a.Time.Equal(b.Time)
}

// TestParseRangeErrors checks that each bad form is a usage error quoting
// the RANGE and naming the bad part.
func TestParseRangeErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "missing topic"},
		{"events", `missing ":PARTITIONS:FROM-UNTIL"`},
		{"events:", "missing partitions"},
		{"events:0", `missing ":FROM-UNTIL"`},
		{"events:0:", "missing FROM-UNTIL"},
		{":0:1-2", "missing topic"},
		{"ev ents:0:1-2", `topic "ev ents" is not a legal topic name`},
		{"..:0:1-2", `topic ".." is not a legal`},
		{strings.Repeat("t", 250) + ":0:1-2", "longer than 249"},
		{"events:x:1-2", `partition "x" is not a number`},
		{"events:-1:1-2", `partition "-1" is not a number`},
		{"events:1,,2:1-2", `empty partition in "1,,2"`},
		{"events:1,:1-2", `empty partition`},
		{"events:*,1:1-2", `partition "*" is not a number`},
		{"events:1,1:1-2", "partition 1 is listed twice"},
		{"events:2147483648:1-2", `partition "2147483648" is out of range`},
		{"events:0:100", `"100" has no "-UNTIL"`},
		{"events:0:100-", "missing UNTIL"},
		{"events:0:-200", "missing FROM"},
		{"events:0:200-100", "FROM 200 is after UNTIL 100"},
		{"events:0:1x-2", `FROM "1x" is not an offset, earliest or @TIME`},
		{"events:0:1-2y", `UNTIL "2y" is not an offset, latest or @TIME`},
		{"events:0:1-2-3", `UNTIL "2-3" is not an offset`},
		{"events:0:latest-100", `FROM cannot be "latest"`},
		{"events:0:0-earliest", `UNTIL cannot be "earliest"`},
		{"events:0:99999999999999999999-1", `FROM "99999999999999999999" is too large`}, // was "is not an offset"
		{"events:0:@yesterday-100", `FROM time "yesterday" is neither RFC 3339`},
		{"events:0:@2026-11-29T10:00:00-100", `FROM time "2026-11-29T10:00:00" is neither RFC 3339`},
		{"events:0:@2026-11-29T10:00:00Z-lates", `UNTIL "lates" is not an offset, latest or @TIME`},
		{"events:0:@-5m-@2026-11-29", `UNTIL time "2026-11-29" is neither RFC 3339`},
		{"events:0:@-5m-", "missing UNTIL"},
		{"events:0:@-5m", `"@-5m" has no "-UNTIL"`},
		{"events:0:@5m-latest", `FROM time "5m" is in the future; write @-5m`},
		{"events:0:0-@+5m", `UNTIL time "+5m" is in the future; write @-5m`},
		{"events:0:@1969-12-31T23:59:59Z-latest", "before 1970-01-01"},
		{"events:0:@2026-11-29T11:00:00Z-@2026-11-29T10:00:00Z", "FROM time 2026-11-29T11:00:00Z is after UNTIL time 2026-11-29T10:00:00Z"},
		{"events:0:@-1m-@-2m", "is after UNTIL time"},
		{"events:0:@foo-@bar", `FROM time "foo"`},
		{"events:0:@", `"@" has no "-UNTIL"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseRange(tc.in, testNow)
			if err == nil {
				t.Fatalf("ParseRange(%q) succeeded, want an error containing %q", tc.in, tc.want)
			}
			var ue *offsets.UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("ParseRange(%q) error %T, want *offsets.UsageError", tc.in, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, strconv.Quote(strings.TrimSpace(tc.in))) {
				t.Errorf("error %q does not quote the range", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not contain %q", msg, tc.want)
			}
			if strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error %q is not one line", msg)
			}
		})
	}
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{
		"events:0:100-200", "events:*:earliest-latest", "events:1:@2026-11-29T10:00:00Z-@-5m",
		"e:1,2,3:@2026-11-29T05:00:00-05:00-100", "e:0:@-1h30m-latest", "e:0:-", "e::", "@:@:@-@",
		"e:0:@2026-11-29T10:00:00.123456789+14:00-@2026-11-29T10:00:00Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s, testNow)
		if err != nil {
			var ue *offsets.UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("error %T is not a *offsets.UsageError: %v", err, err)
			}
			// The text raw in quotes: it is escaped once, where the
			// error is printed.
			if !strings.Contains(err.Error(), `"`+strings.TrimSpace(s)+`"`) {
				t.Fatalf("error %q does not quote %q", err, s)
			}
			return
		}
		if r.Topic == "" || r.Text != strings.TrimSpace(s) {
			t.Fatalf("bad spec %+v from %q", r, s)
		}
		if r.From.Kind == BoundLatest || r.Until.Kind == BoundEarliest {
			t.Fatalf("bound kinds swapped in %+v from %q", r, s)
		}
		if r.From.Kind == BoundOffset && r.Until.Kind == BoundOffset && r.From.Offset > r.Until.Offset {
			t.Fatalf("backwards range accepted: %+v from %q", r, s)
		}
		again, err := ParseRange(r.String(), testNow)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", r.String(), s, err)
		}
		again.Text = r.Text
		if !specEqual(again, r) {
			t.Fatalf("round trip of %q through %q: got %+v want %+v", s, r.String(), again, r)
		}
	})
}
