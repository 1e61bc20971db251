package filter

import (
	"strconv"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/kbatch-dev/kbatch/record"
)

// A record evaluated after one that had a field does not see that field:
// the projected fields' room is reused from one record to the next.
func TestReusedRoomForgetsThePreviousRecord(t *testing.T) {
	p, err := Compile(`value.country == "FR" && key.country == "FR"`)
	if err != nil {
		t.Fatal(err)
	}
	with := &record.Record{Topic: "t", Key: []byte(`{"country":"FR"}`), Value: []byte(`{"amount":95,"country":"FR"}`)}
	for _, without := range []*record.Record{
		{Topic: "t", Key: []byte(`{"country":"FR"}`), Value: []byte(`{"amount":95}`)},
		{Topic: "t", Key: []byte(`{"amount":95}`), Value: []byte(`{"amount":95,"country":"FR"}`)},
		{Topic: "t", Key: []byte(`{"country":"FR"}`), Value: []byte(`{}`)},
		{Topic: "t", Key: []byte(`{"country":"FR"}`), Value: []byte(`{"amount":95,"country":"FR"`)}, // not JSON: a string
	} {
		// Many times: a pool may drop what it is given.
		for range 50 {
			if ok, err := p.Match(with, nil); !ok || err != nil {
				t.Fatalf("%s / %s: %v, %v; want a match", with.Key, with.Value, ok, err)
			}
			if ok, err := p.Match(without, nil); ok || err == nil {
				t.Fatalf("%s / %s after a record with the field: %v, %v; want no match and an error", without.Key, without.Value, ok, err)
			}
		}
	}
}

// The same with Avro values: a value that does not decode after one that
// did is read from its bytes, without the fields of the one before.
func TestReusedRoomForgetsThePreviousAvroRecord(t *testing.T) {
	const avsc = `{"type":"record","name":"P","fields":[{"name":"amount","type":"double"},{"name":"country","type":"string"},{"name":"note","type":"string"}]}`
	dec := Schemas(avroFileDecoder(t, avsc))
	good, err := avro.Marshal(avro.MustParse(avsc), map[string]any{"amount": 95.5, "country": "FR", "note": "n"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(`value.amount > 90.0 && value.country == "FR"`)
	if err != nil {
		t.Fatal(err)
	}
	with := &record.Record{Topic: "t", Value: good}
	// Cut in the last field: amount and country decode, then it fails.
	without := &record.Record{Topic: "t", Value: good[:len(good)-1]}
	for range 50 {
		if ok, err := p.Match(with, dec); !ok || err != nil {
			t.Fatalf("decoded Avro: %v, %v; want a match", ok, err)
		}
		if ok, err := p.Match(without, dec); ok || err == nil {
			t.Fatalf("cut Avro after a whole one: %v, %v; want no match and an error", ok, err)
		}
	}
}

// After a record, an activation holds nothing of it, even fields a failed
// decode left past the room's length: records' bytes are not kept alive.
func TestActivationResetKeepsNoValue(t *testing.T) {
	a := newActivation().(*activation)
	a.valueRoom.Fields = append(a.valueRoom.Fields, field{Name: "a", Value: "x"}, field{Name: "b", Value: "y"})
	a.valueRoom.Fields = a.valueRoom.Fields[:1]
	a.keyRoom.Fields = append(a.keyRoom.Fields, field{Name: "k", Value: 1.0})
	a.key, a.value, a.r, a.done = "k", "v", &record.Record{}, keyDone|valueDone
	a.reset()
	if a.key != nil || a.value != nil || a.r != nil || a.done != 0 || len(a.valueRoom.Fields) != 0 || len(a.keyRoom.Fields) != 0 {
		t.Fatalf("after reset: %+v", a)
	}
	if a.valueRoom.Scalars == nil {
		t.Fatal("reset dropped the rooms' Scalars")
	}
	for i, f := range a.valueRoom.Fields[:cap(a.valueRoom.Fields)] {
		if f != (field{}) {
			t.Fatalf("value room [%d] still holds %+v", i, f)
		}
	}
	for i, f := range a.keyRoom.Fields[:cap(a.keyRoom.Fields)] {
		if f != (field{}) {
			t.Fatalf("key room [%d] still holds %+v", i, f)
		}
	}
}

// One activation and CEL frame evaluate each record afresh, in a
// comprehension too: a record without the header after one with it does
// not match.
func TestReusedFrameEvaluatesEachRecord(t *testing.T) {
	p, err := Compile(`headers_list.exists(h, h.key == "trace") && value.n > 1`)
	if err != nil {
		t.Fatal(err)
	}
	with := &record.Record{Value: []byte(`{"n":2}`), Headers: []*record.Header{{Key: []byte("trace"), Value: []byte("a")}}}
	without := &record.Record{Value: []byte(`{"n":2}`), Headers: []*record.Header{{Key: []byte("span"), Value: []byte("a")}}}
	bad := &record.Record{Value: []byte(`{"m":2}`), Headers: with.Headers}
	a := newActivation().(*activation)
	for range 20 {
		for _, c := range []struct {
			r         *record.Record
			ok, fails bool
		}{{with, true, false}, {without, false, false}, {bad, false, true}, {with, true, false}} {
			if ok, err := a.match(p, c.r, nil); ok != c.ok || (err != nil) != c.fails {
				t.Fatalf("%s %s: %v, %v; want %v, fails %v", c.r.Headers[0].Key, c.r.Value, ok, err, c.ok, c.fails)
			}
		}
	}
}

// Select over many records (split over goroutines, each with its own
// activation) keeps what Match keeps, record by record, and counts each
// record once.
func TestSelectIsMatchRecordByRecord(t *testing.T) {
	p, err := Compile(`value.amount > 90.0 && value.country == "FR"`)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4000
	recs := make([]record.Record, n)
	for i := range recs {
		switch i % 5 {
		case 0:
			recs[i].Value = []byte(`{"amount":95,"country":"FR"}`)
		case 1:
			recs[i].Value = []byte(`{"amount":95}`)
		case 2:
			recs[i].Value = []byte(`{"amount":` + strconv.Itoa(i%200) + `,"country":"FR"}`)
		case 3:
			recs[i].Value = []byte(`not json`)
		default:
			recs[i].Value = []byte(`{"amount":99.5,"country":"DE"}`)
		}
		recs[i].Offset = int64(i)
	}
	w := NewWhere(p, nil)
	keep := make([]bool, n)
	w.Select(n, func(i int) *record.Record { return &recs[i] }, keep)
	var wantMatched, wantFailed int64
	for i := range recs {
		ok, err := p.Match(&recs[i], nil)
		if ok != keep[i] {
			t.Fatalf("record %d (%s): Select kept %v, Match says %v", i, recs[i].Value, keep[i], ok)
		}
		if ok {
			wantMatched++
		}
		if err != nil {
			wantFailed++
		}
	}
	if seen, matched, failed := w.Counts(); seen != n || matched != wantMatched || failed != wantFailed {
		t.Fatalf("counts %d seen, %d matched, %d failed; want %d, %d, %d", seen, matched, failed, n, wantMatched, wantFailed)
	}
}
