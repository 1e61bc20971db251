package schema

import "testing"

// BenchmarkDecode measures decoding with the schema cached (the steady
// state of a watch or a replay --decode): one record per op.
func BenchmarkDecode(b *testing.B) {
	reg := newFakeRegistry(b)
	d := newDecoder(b, Options{RegistryURL: reg.URL()})
	fd := protoFiles(b)
	order := fd.Messages().ByName("Order")
	cases := []struct {
		name string
		rec  []byte
	}{
		{"avro", frame(reg.avroID, avroOrderBytes(b))},
		{"protobuf", frame(reg.protoID, append(protoIndexes(1), protoBytes(b, order,
			`{"id":"7","lines":[{"sku":"A-1","qty":2,"price":{"currency":"EUR","units":"5"}},{"sku":"B-2","qty":1}],"total":{"currency":"EUR","units":"10"},"created":"2026-12-01T20:00:00Z"}`)...))},
		{"jsonschema", frame(reg.jsonID, []byte(`{"name":"Ada Lovelace","age":36,"address":{"city":"London"}}`))},
		{"not-framed", []byte(`{"plain":"json value of a topic without schemas"}`)},
	}
	for _, c := range cases {
		if r := d.Decode("orders", false, c.rec); c.name != "not-framed" && r.Status != Decoded {
			b.Fatalf("%s: %+v", c.name, r)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.rec)))
			b.ReportAllocs()
			for b.Loop() {
				d.Decode("orders", false, c.rec)
			}
		})
	}
}
