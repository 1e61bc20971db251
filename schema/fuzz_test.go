package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecode feeds hostile bytes to every kind of schema: registry Avro,
// Protobuf and JSON Schema (as the payload after a header with each id,
// and as the whole record), and local Protobuf and Avro. Nothing may
// panic or hang; a decoded result is valid JSON a terminal can show; a
// reason is one line.
func FuzzDecode(f *testing.F) {
	reg := newFakeRegistry(f)
	d := newDecoder(f, Options{RegistryURL: reg.URL()})
	local := newDecoder(f, Options{Local: []Local{
		{Topic: "p", ProtoFile: "testdata/proto/shop/v1/order.proto", ProtoPaths: []string{"testdata/proto"}, Message: "shop.v1.Order"},
		{Topic: "a", AvroFile: "testdata/order.avsc"},
	}})
	ids := []int{reg.avroID, reg.protoID, reg.jsonID}
	// Warm the cache so the fuzz loop never waits for the fake registry.
	for _, id := range ids {
		d.Decode("w", false, frame(id, nil))
	}
	f.Add(avroOrderBytes(f), uint8(0))
	f.Add(append(protoIndexes(1, 0), 0x0a, 0x01, 'A', 0x10, 0x02), uint8(1))
	f.Add([]byte(`{"name":"\u009b\u0007x","age":-1}`), uint8(2))
	f.Add(frame(reg.avroID, []byte{0x01}), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, sel uint8) {
		check := func(r Result) {
			if strings.ContainsAny(r.Reason, "\n\r") {
				t.Fatalf("reason spans lines: %q", r.Reason)
			}
			if r.Status != Decoded {
				if r.JSON != "" {
					t.Fatalf("JSON %q with status %v", r.JSON, r.Status)
				}
				return
			}
			if !json.Valid([]byte(r.JSON)) {
				t.Fatalf("invalid JSON %q", r.JSON)
			}
			for _, c := range r.JSON {
				if c < 0x20 || (c >= 0x7f && c < 0xa0) {
					t.Fatalf("JSON carries control character %U: %q", c, r.JSON)
				}
			}
		}
		check(d.Decode("t", sel&1 == 1, frame(ids[int(sel)%len(ids)], b)))
		check(d.TryDecode("t", false, b)) // an unknown id is fetched in the background
		check(local.Decode([]string{"p", "a"}[sel%2], false, b))
	})
}
