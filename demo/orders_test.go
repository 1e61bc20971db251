package demo

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	hamba "github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// The orders' payloads are the order schema's canonical encoding: hamba's
// Avro reads each one and writes the same bytes back, with the schema id
// the registry gave in front.
func TestOrdersAreTheSchemasCanonicalEncoding(t *testing.T) {
	reg := srfake.New()
	t.Cleanup(reg.Close)
	o, err := newOrders(7, reg)
	if err != nil {
		t.Fatal(err)
	}
	s := hamba.MustParse(orderSchema)
	coupons := 0
	for i := range 300 {
		r := o.order(fixedTS.Add(time.Duration(i) * time.Second))
		if len(r.Value) < 5 || r.Value[0] != 0 || int(binary.BigEndian.Uint32(r.Value[1:5])) != o.id {
			t.Fatalf("order %d: frame % x, want schema id %d", i, r.Value[:min(5, len(r.Value))], o.id)
		}
		payload := r.Value[5:]
		var v map[string]any
		if err := hamba.Unmarshal(s, payload, &v); err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
		again, err := hamba.Marshal(s, v)
		if err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
		if !bytes.Equal(again, payload) {
			t.Fatalf("order %d: payload\n% x\nhamba writes\n% x", i, payload, again)
		}
		if v["order_id"] != string(r.Key) {
			t.Fatalf("order %d: order_id %v, key %q", i, v["order_id"], r.Key)
		}
		if v["coupon"] != nil {
			coupons++
		}
	}
	if coupons == 0 || coupons == 300 {
		t.Fatalf("%d of 300 orders have a coupon: the optional field is not exercised both ways", coupons)
	}
}
