package demo

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kbatch-dev/kbatch/schema/avro"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// OrdersTopic holds shop orders as Avro in the Confluent wire format,
// their schema in the demo's embedded registry (Demo.RegistryURL).
const OrdersTopic = "orders"

const (
	ordersPartitions = 2
	// ordersShare is how many orders the live traffic adds per record of
	// the mixed stream.
	ordersShare = 0.1
	// ordersBacklog is how many orders the backlog holds.
	ordersBacklog = 400
	// OrdersSubject is the registry subject of the orders' value schema.
	OrdersSubject = OrdersTopic + "-value"
)

// orderSchema is the Avro schema of an order: nested records in an array,
// decimals, enums, a timestamp and an optional field, so the decoded view
// has something to show.
const orderSchema = `{
  "type": "record", "name": "Order", "namespace": "shop.v1",
  "fields": [
    {"name": "order_id", "type": "string"},
    {"name": "customer", "type": "string"},
    {"name": "items", "type": {"type": "array", "items": {
      "type": "record", "name": "Item", "fields": [
        {"name": "sku", "type": "string"},
        {"name": "qty", "type": "int"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}}
      ]}}},
    {"name": "total", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
    {"name": "currency", "type": {"type": "enum", "name": "Currency", "symbols": ["EUR", "USD", "GBP"]}},
    {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED", "CANCELLED"]}},
    {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "coupon", "type": ["null", "string"], "default": null}
  ]
}`

type avroItem struct {
	SKU   string
	Qty   int
	Price *big.Rat
}

type avroOrder struct {
	OrderID  string
	Customer string
	Items    []avroItem
	Total    *big.Rat
	Currency string
	Status   string
	Created  time.Time
	Coupon   *string
}

// currencies and orderStatuses are the symbols of the schema's enums.
var (
	currencies    = []string{"EUR", "USD", "GBP"}
	orderStatuses = []string{"NEW", "PAID", "SHIPPED", "CANCELLED"}
)

// encode writes o in the Avro binary encoding of orderSchema.
func (o *avroOrder) encode(w *avro.Writer) {
	w.String(o.OrderID)
	w.String(o.Customer)
	if len(o.Items) > 0 {
		w.Block(len(o.Items), func() {
			for _, it := range o.Items {
				w.String(it.SKU)
				w.Int(int32(it.Qty))
				w.Decimal(unscaled2(it.Price))
			}
		})
	}
	w.BlockCount(0)
	w.Decimal(unscaled2(o.Total))
	w.Int(int32(slices.Index(currencies, o.Currency)))
	w.Int(int32(slices.Index(orderStatuses, o.Status)))
	w.Long(o.Created.UnixMilli())
	if o.Coupon == nil {
		w.Long(0)
	} else {
		w.Long(1)
		w.String(*o.Coupon)
	}
}

// unscaled2 is r as the unscaled value of a decimal of scale 2.
func unscaled2(r *big.Rat) *big.Int {
	n := new(big.Int).Mul(r.Num(), big.NewInt(100))
	return n.Quo(n, r.Denom())
}

var (
	skus      = [...]string{"TEA-GREEN-100G", "MUG-BLUE", "KETTLE-1L", "FILTER-50", "HONEY-250G", "SPOON-SET"}
	prices    = [...]int64{650, 1290, 3499, 450, 899, 1575} // cents, per sku
	statuses  = [...]string{"NEW", "NEW", "NEW", "PAID", "PAID", "SHIPPED", "CANCELLED"}
	customers = [...]string{"alice", "bob", "chen", "dana", "emeka", "farah", "gustav", "hana", "ivan", "jo"}
)

// orders makes the demo's orders: Avro values framed with the schema id
// the registry gave, keyed "order-N". It draws from a source of its own, so
// adding orders leaves the other topics' records as they were for a seed.
// It is not safe for concurrent use.
type orders struct {
	rng   *rand.Rand
	id    int
	next  int
	hash  kgo.TopicPartitioner
	share float64 // orders owed to the live traffic, fractional
}

// newOrders registers the order schema with reg and returns the generator.
func newOrders(seed int64, reg *srfake.Registry) (*orders, error) {
	id, _, err := reg.RegisterSchema(OrdersSubject, sr.Schema{Schema: orderSchema, Type: sr.TypeAvro})
	if err != nil {
		return nil, fmt.Errorf("demo: register the order schema: %w", err)
	}
	return &orders{
		rng: rand.New(rand.NewPCG(uint64(seed), 0x6f7264657273)), // "orders"
		id:  id, next: 1000,
		hash: kgo.StickyKeyPartitioner(nil).ForTopic(""),
	}, nil
}

// order returns the next order, created at ts.
func (o *orders) order(ts time.Time) *kgo.Record {
	o.next++
	a := avroOrder{
		OrderID:  fmt.Sprintf("o-%d", o.next),
		Customer: customers[o.rng.IntN(len(customers))],
		Currency: "EUR",
		Status:   statuses[o.rng.IntN(len(statuses))],
		Created:  ts.UTC().Truncate(time.Millisecond),
	}
	total := int64(0)
	for range 1 + o.rng.IntN(3) {
		i := o.rng.IntN(len(skus))
		qty := 1 + o.rng.IntN(4)
		a.Items = append(a.Items, avroItem{SKU: skus[i], Qty: qty, Price: big.NewRat(prices[i], 100)})
		total += int64(qty) * prices[i]
	}
	if o.rng.IntN(5) == 0 {
		c := "WELCOME10"
		a.Coupon = &c
		total -= total / 10
	}
	a.Total = big.NewRat(total, 100)
	var w avro.Writer
	w.Fixed([]byte{0, 0, 0, 0, 0})
	binary.BigEndian.PutUint32(w.Bytes()[1:], uint32(o.id))
	a.encode(&w)
	r := &kgo.Record{
		Topic:     OrdersTopic,
		Key:       []byte(a.OrderID),
		Value:     w.Bytes(),
		Timestamp: ts,
		Headers:   []kgo.RecordHeader{{Key: "content-type", Value: []byte("application/vnd.kafka.avro.v2")}},
	}
	r.Partition = int32(o.hash.Partition(r, ordersPartitions))
	return r
}

// live returns the orders owed for n records of the mixed stream.
func (o *orders) live(n int) int {
	o.share += float64(n) * ordersShare
	k := int(o.share)
	o.share -= float64(k)
	return k
}
