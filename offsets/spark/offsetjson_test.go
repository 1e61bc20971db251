package spark

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

func TestParseOffsetJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want Offsets
	}{
		{"one partition", `{"t":{"0":23}}`, offs("t", 0, 23)},
		{"unsorted keys", `{"b":{"2":3,"0":1,"1":2},"a":{"0":-2}}`, merge(offs("b", 0, 1, 1, 2, 2, 3), offs("a", 0, -2))},
		{"whitespace and trailing newline", " {\n \"t\" : { \"1\" : -1 } }\n", offs("t", 1, -1)},
		{"empty object", `{}`, Offsets{}},
		{"topic without partitions", `{"t":{}}`, Offsets{}},
		{"MaxOffset keeps every digit", `{"t":{"0":4611686018427387904}}`, offs("t", 0, 4611686018427387904)},
		{"above 2^53 is not rounded", `{"t":{"0":9007199254740993}}`, offs("t", 0, 9007199254740993)},
		{"max int32 partition", `{"t":{"2147483647":5}}`, offs("t", 2147483647, 5)},
		{"topic names are data", `{"a.b-c_9":{"0":1},"\u00e9":{"0":2}}`, merge(offs("a.b-c_9", 0, 1), offs("é", 0, 2))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseOffsetJSON([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			sameOffsets(t, tc.in, got, tc.want)
		})
	}
}

func TestParseOffsetJSONRejects(t *testing.T) {
	for _, in := range []string{
		``,
		`   `,
		`null`,
		`[]`,
		`0`,
		`{"logOffset":345}`,
		`{"sourceVersion":1,"reservoirVersion":3}`,
		`{"t":null}`,
		`{"t":[1]}`,
		`{"t":"earliest"}`,
		`{"t":{"x":1}}`,
		`{"t":{"":1}}`,
		`{"t":{"-1":1}}`,
		`{"t":{"2147483648":1}}`,
		`{"t":{"0":1.5}}`,
		`{"t":{"0":1.0}}`,
		`{"t":{"0":1e3}}`,
		`{"t":{"0":"5"}}`,
		`{"t":{"0":null}}`,
		`{"t":{"0":true}}`,
		`{"t":{"0":9223372036854775808}}`,
		`{"t":{"1":1,"01":2}}`,
		`{"t":{"0":1},"t":{"1":1}}`,
		`{"":{"0":1}}`,
		`{"t":{"0":1}} x`,
		`{}{}`,
		`{"t":{"0":1}`,
		`{"t":{"0":`,
		`{"t":{"0":1,}}`,
		`{'t':{}}`,
	} {
		got, err := ParseOffsetJSON([]byte(in))
		if err == nil || got != nil {
			t.Errorf("ParseOffsetJSON(%q) = %v, %v; want an error", in, got, err)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseOffsetJSON(%q) error %v does not wrap ErrMalformed", in, err)
		}
	}
}

func TestParseOffsetJSONErrorMessage(t *testing.T) {
	_, err := ParseOffsetJSON([]byte(`{"events":{"zero":1}}`))
	want := `malformed Kafka offset JSON: topic "events": partition key "zero" is not a partition number`
	if err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestOffsetsPartitionsSorted(t *testing.T) {
	o := merge(offs("b", 10, 1, 2, 1), offs("a", 1, 1))
	want := []offsets.Partition{{Topic: "a", Partition: 1}, {Topic: "b", Partition: 2}, {Topic: "b", Partition: 10}}
	if got := o.Partitions(); !slices.Equal(got, want) {
		t.Errorf("Partitions() = %v, want %v", got, want)
	}
}

// TestParseOffsetJSONErrorsQuoteTopics: a partition named in an error
// about its offset is quoted when it needs escapes (offsets.QuoteName),
// so the reader sees where the name ends; the error keeps it raw, and the
// line printed from it (record.String, once, at the edge) shows it
// escaped, with no control byte.
func TestParseOffsetJSONErrorsQuoteTopics(t *testing.T) {
	evil := `e\u001b]0;PWNED\u0007\u009b2J`
	for _, in := range []string{
		`{"` + evil + `":{"0":"5"}}`,
		`{"` + evil + `":{"0":1.5}}`,
		`{"` + evil + `":{"0":-3}}`,
		`{"` + evil + `":{"1":1,"01":2}}`,
	} {
		_, err := ParseOffsetJSON([]byte(in))
		if err == nil {
			t.Fatalf("ParseOffsetJSON(%s) accepted it", in)
		}
		if !strings.Contains(err.Error(), "\"e\x1b]0;PWNED\x07\u009b2J[") {
			t.Errorf("ParseOffsetJSON(%s): error %q does not quote the topic", in, err)
		}
		line := record.String(err.Error())
		if strings.ContainsAny(line, "\x1b\x07\u009b") || !strings.Contains(line, `"e\x1b]0;PWNED\x07\u009b2J[`) {
			t.Errorf("ParseOffsetJSON(%s): printed as %q", in, line)
		}
	}
	err := checkResolved(Offsets{{Topic: "e\x1b[2J", Partition: 0}: -1})
	if err == nil || !strings.Contains(err.Error(), "\"e\x1b[2J[0]\"") {
		t.Errorf("checkResolved: %q", err)
	}
}

func TestStartingOffsetsJSON(t *testing.T) {
	for _, tc := range []struct {
		name       string
		next       Offsets
		partitions map[string]int32
		want       string
	}{
		{"FORMAT.md export example", offs(topic243, 2, 3, 4, 3, 1, 3, 3, 3, 0, 3), map[string]int32{topic243: 5},
			`{"spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62":{"0":3,"1":3,"2":3,"3":3,"4":3}}`},
		{"partitions added since the checkpoint get -2", offs("t", 0, 7, 1, 8), map[string]int32{"t": 4},
			`{"t":{"0":7,"1":8,"2":-2,"3":-2}}`},
		{"a topic the checkpoint lacks gets -2", offs("b", 0, 1), map[string]int32{"a": 2, "b": 1},
			`{"a":{"0":-2,"1":-2},"b":{"0":1}}`},
		{"nil partitions keeps next, sorted numerically", offs("t", 10, 1, 9, 2, 0, 3), nil,
			`{"t":{"0":3,"9":2,"10":1}}`},
		{"partitions beyond the count are kept", offs("t", 5, 1), map[string]int32{"t": 1},
			`{"t":{"0":-2,"5":1}}`},
		{"empty", nil, map[string]int32{"gone": 0}, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StartingOffsetsJSON(tc.next, tc.partitions); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestEndingOffsetsJSON(t *testing.T) {
	got := EndingOffsetsJSON(offs("t", 1, 100), map[string]int32{"t": 3})
	if want := `{"t":{"0":-1,"1":100,"2":-1}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestStartingOffsetsJSONRoundTrip(t *testing.T) {
	next := merge(offs("events", 0, 42, 2, 9007199254740993), offs("audit", 0, 0))
	partitions := map[string]int32{"events": 4, "audit": 1, "new-topic": 2}
	got, err := ParseOffsetJSON([]byte(StartingOffsetsJSON(next, partitions)))
	if err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(next)
	maps.Copy(want, offs("events", 1, OffsetEarliest, 3, OffsetEarliest))
	maps.Copy(want, offs("new-topic", 0, OffsetEarliest, 1, OffsetEarliest))
	sameOffsets(t, "round trip", got, want)
}

func TestStartingOffsetsJSONFromFixture(t *testing.T) {
	c := openFixture(t, kafka243)
	pos := mustCommitted(t, c, -1)
	got, err := ParseOffsetJSON([]byte(StartingOffsetsJSON(pos.Offsets, map[string]int32{topic243: 7})))
	if err != nil {
		t.Fatal(err)
	}
	sameOffsets(t, "exported", got, offs(topic243, 0, 3, 1, 3, 2, 3, 3, 3, 4, 3, 5, -2, 6, -2))
}
