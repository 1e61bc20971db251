package exchange_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/exchange"
	"github.com/kbatch-dev/kbatch/offsets/spark"
	"github.com/kbatch-dev/kbatch/record"
)

func tp(topic string, p int32) offsets.Partition {
	return offsets.Partition{Topic: topic, Partition: p}
}

func ExampleWrite() {
	next := map[offsets.Partition]int64{tp("events", 1): 120, tp("events", 0): 80}
	_ = exchange.Write(os.Stdout, exchange.Document{Stream: "events", Topics: []string{"events"}, Next: next})
	// Output:
	// {"stream":"events","topics":["events"],"next":{"events":{"0":80,"1":120}}}
}

func TestWriteThenParse(t *testing.T) {
	for _, d := range []exchange.Document{
		{Stream: "events", Topics: []string{"a", "b"}, Next: map[offsets.Partition]int64{tp("a", 0): 0, tp("a", 3): 7, tp("b", 1): spark.MaxOffset}},
		{Stream: "", Topics: []string{}, Next: map[offsets.Partition]int64{}},
		{Stream: "we\"ird \\ name", Topics: []string{"t"}, Next: map[offsets.Partition]int64{tp("t", 0): 1}},
	} {
		var buf bytes.Buffer
		if err := exchange.Write(&buf, d); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(buf.String(), "\n"); n != 1 || !strings.HasSuffix(buf.String(), "\n") {
			t.Fatalf("Write gave %q: want one line", buf.String())
		}
		got, skipped, err := exchange.Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("Parse(%q): %v", buf.String(), err)
		}
		if got.Stream != d.Stream || !slices.Equal(got.Topics, d.Topics) || !maps.Equal(got.Next, d.Next) || skipped != nil {
			t.Errorf("Parse(Write(%+v)) = %+v, skipped %v", d, got, skipped)
		}
	}
}

// TestWriteNilTopics: a document without topics lists none, so the line
// always has the three keys import looks for.
func TestWriteNilTopics(t *testing.T) {
	var buf bytes.Buffer
	if err := exchange.Write(&buf, exchange.Document{Stream: "s"}); err != nil {
		t.Fatal(err)
	}
	if want := `{"stream":"s","topics":[],"next":{}}` + "\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// TestWriteEscapesForTerminal: names from a store can hold anything; the
// line escapes what a terminal would act on and still parses back.
func TestWriteEscapesForTerminal(t *testing.T) {
	evil := "ev\x1b]0;PWNED\x07il\u202e"
	d := exchange.Document{Stream: evil, Topics: []string{evil}, Next: map[offsets.Partition]int64{tp(evil, 0): 5}}
	var buf bytes.Buffer
	if err := exchange.Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	for _, r := range strings.TrimSuffix(buf.String(), "\n") {
		if record.UnsafeRune(r) {
			t.Fatalf("Write gave %q, holding %U", buf.String(), r)
		}
	}
	got, _, err := exchange.Parse(buf.Bytes())
	if err != nil || got.Stream != evil || got.Next[tp(evil, 0)] != 5 {
		t.Errorf("Parse = %+v, %v; want the name back", got, err)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in    string
		stream      string
		topics      []string
		next        map[offsets.Partition]int64
		skipped     []offsets.Partition
		wantErr     string
		malformedIs bool
	}{
		{name: "kbatch document", in: `{"stream":"events","topics":["events","other"],"next":{"events":{"1":120,"0":80}}}`,
			stream: "events", topics: []string{"events", "other"}, next: map[offsets.Partition]int64{tp("events", 0): 80, tp("events", 1): 120}},
		{name: "document without topics", in: `{"stream":"s","next":{"t":{"0":1}}}`, stream: "s", next: map[offsets.Partition]int64{tp("t", 0): 1}},
		{name: "Spark JSON, -1 and -2 skipped in order", in: `{"b":{"0":-1},"a":{"2":-2,"1":9}}`,
			next: map[offsets.Partition]int64{tp("a", 1): 9}, skipped: []offsets.Partition{tp("a", 2), tp("b", 0)}},
		{name: "a topic called stream is Spark JSON", in: `{"stream":{"0":4}}`, next: map[offsets.Partition]int64{tp("stream", 0): 4}},
		{name: "empty object", in: `{}`, next: map[offsets.Partition]int64{}},
		{name: "-1 in a document", in: `{"stream":"s","next":{"e":{"0":-1}}}`, wantErr: "offset -1 of e[0] is not a next offset"},
		{name: "other negative in Spark JSON", in: `{"events":{"1":-7}}`, malformedIs: true},
		{name: "not an object", in: `[]`, wantErr: `not a JSON object like {"stream":"events","next":{"events":{"0":80}}} or {"events":{"0":80}}`},
		{name: "no next", in: `{"stream":"s"}`, wantErr: `a kbatch offsets document needs "next"`},
		{name: "topics not names", in: `{"stream":"s","topics":[1],"next":{}}`, wantErr: `"topics" is not a list of names`},
		{name: "stream a number: Spark JSON with a bad topic", in: `{"stream":1}`, malformedIs: true},
		{name: "offset too large", in: `{"e":{"0":9223372036854775807}}`, malformedIs: true},
		{name: "hostile name quoted in the error", in: `{"stream":"s","next":{"e\u001b[2J":{"0":-2}}}`, wantErr: "offset -2 of \"e\x1b[2J[0]\" is not"}, // raw in quotes; escaped once where printed
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, skipped, err := exchange.Parse([]byte(tc.in))
			switch {
			case tc.malformedIs:
				if !errors.Is(err, spark.ErrMalformed) {
					t.Fatalf("err = %v, want one wrapping spark.ErrMalformed", err)
				}
				return
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if d.Stream != tc.stream || !slices.Equal(d.Topics, tc.topics) || !maps.Equal(d.Next, tc.next) || !slices.Equal(skipped, tc.skipped) {
				t.Errorf("Parse = %+v, skipped %v; want stream %q topics %v next %v skipped %v", d, skipped, tc.stream, tc.topics, tc.next, tc.skipped)
			}
		})
	}
}

// FuzzParse checks that the --from-json parser never panics and that what
// it accepts is a set of real next offsets: partitions and offsets at least
// 0, offsets at most spark.MaxOffset (so no difference overflows), -1/-2
// only reported as skipped, never also kept.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"stream":"events","topics":["events"],"next":{"events":{"0":80,"1":120}}}`,
		`{"events":{"0":80,"1":-1,"2":-2}}`, `{"events":{"1":-7}}`, `{"e":{"0":9223372036854775807}}`,
		`{"stream":"s","next":{"e":{"0":-1}}}`, `{"stream":1}`, `[]`, `{"stream":"s"}`, `{"e\u001b[2J":{"0":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, skipped, err := exchange.Parse(b)
		if err != nil {
			return
		}
		for p, off := range d.Next {
			if p.Partition < 0 || off < 0 || off > spark.MaxOffset {
				t.Fatalf("accepted %s=%d from %q", p, off, b)
			}
		}
		for _, p := range skipped {
			if _, kept := d.Next[p]; kept || p.Partition < 0 {
				t.Fatalf("skipped %s from %q: %s", p, b, fmt.Sprint(d.Next))
			}
		}
	})
}
