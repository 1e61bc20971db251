package filter

import (
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/kbatch-dev/kbatch/record"
)

const benchAvsc = `{"type":"record","name":"Payment","fields":[{"name":"id","type":"long"},{"name":"amount","type":"double"},
 {"name":"country","type":"string"},{"name":"type","type":"string"},{"name":"customer","type":"string"},
 {"name":"note","type":["null","string"],"default":null}]}`

func benchPayment(i int) map[string]any {
	return map[string]any{"id": int64(i), "amount": float64(i % 200), "country": []string{"FR", "DE", "ES"}[i%3],
		"type": []string{"sale", "refund"}[i%2], "customer": "customer-with-a-longer-name-0001", "note": "a note of some length for the record"}
}

// BenchmarkMatch is one evaluation of a three-field filter on a ~200 B
// JSON value and on the same payment in Avro (decoded through a local
// schema, as a registry's would be).
func BenchmarkMatch(b *testing.B) {
	p, err := Compile(`value.amount > 90.0 && value.country == "FR" && value.type == "refund"`)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("json", func(b *testing.B) {
		v := []byte(`{"id":1234,"amount":95.5,"country":"FR","type":"refund","customer":"customer-with-a-longer-name-0001","note":"a note of some length for the record","tags":["a","b"]}`)
		r := &record.Record{Topic: "payments", Key: []byte("user-7"), Value: v}
		for b.Loop() {
			if ok, err := p.Match(r, nil); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("avro", func(b *testing.B) {
		dec := avroFileDecoder(b, benchAvsc)
		v := benchPayment(1)
		v["amount"], v["country"], v["type"], v["note"] = 95.5, "FR", "refund", map[string]any{"string": "a note"}
		payload, err := avro.Marshal(avro.MustParse(benchAvsc), v)
		if err != nil {
			b.Fatal(err)
		}
		r := &record.Record{Topic: "payments", Value: payload}
		d := Schemas(dec)
		for b.Loop() {
			if ok, err := p.Match(r, d); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}
