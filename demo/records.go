package demo

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// eventsShare is the fraction of records that go to "events"; the rest
	// go to "sensor-data".
	eventsShare = 0.6
	// oddEvery is the mean number of sensor records per odd one.
	oddEvery = 500
	users    = 1000
	sensors  = 48
)

// oddKind is a deliberately awkward sensor-data record.
type oddKind int

const (
	oddNullKey oddKind = iota // null key, ordinary JSON value
	oddBinary                 // value is not UTF-8
	oddHostile                // value and a header carry terminal escapes

	oddKinds = 3
)

// hostileValue carries what a terminal must never receive raw: clear screen
// and home (CSI 2J, CSI H), an OSC 52 clipboard write of "rm -rf ~", an SGR
// colour, a C1 CSI (U+009B), and a right-to-left override that makes
// "exe.txt" read as "txt.exe".
const hostileValue = "maintenance note: \x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4=\x07" +
	"reboot pending \u202Etxt.exe\u202C \x1b[31mALERT\x1b[0m \u009b7m\r\n"

// hostileHeader sets the terminal's window title (OSC 0).
const hostileHeader = "\x1b]0;you have been pwned\x07"

// generator makes the demo's records. Everything it writes is drawn from
// one seeded source, so the same seed gives the same records in the same
// order. It is not safe for concurrent use.
type generator struct {
	rng     *rand.Rand
	users   *rand.Zipf
	sensors []sensor
	hash    kgo.TopicPartitioner // Kafka's default key hashing (murmur2)
}

func newGenerator(seed int64) *generator {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6b62617463682d64)) // "kbatch-d"
	g := &generator{
		rng:   rng,
		users: rand.NewZipf(rng, 1.15, 8, users-1),
		hash:  kgo.StickyKeyPartitioner(nil).ForTopic(""),
	}
	for i := range sensors {
		g.sensors = append(g.sensors, newSensor(rng, i+1))
	}
	return g
}

// next returns the next record of the mixed stream, timestamped ts, with
// its topic and partition set.
func (g *generator) next(ts time.Time) *kgo.Record {
	if g.rng.Float64() < eventsShare {
		return g.event(ts)
	}
	if g.rng.IntN(oddEvery) == 0 {
		return g.odd(g.oddKind(), ts)
	}
	return g.reading(ts)
}

// oddKind picks a kind of odd record: null keys are common, hostile values
// rare.
func (g *generator) oddKind() oddKind {
	switch r := g.rng.IntN(100); {
	case r < 45:
		return oddNullKey
	case r < 85:
		return oddBinary
	default:
		return oddHostile
	}
}

// activity is the JSON value of an "events" record.
type activity struct {
	User   string  `json:"user"`
	Action string  `json:"action"`
	Amount float64 `json:"amount,omitempty"`
	TS     string  `json:"ts"`
}

var actions = [...]struct {
	name   string
	weight int
	amount bool
}{
	{"view", 45, false}, {"click", 20, false}, {"search", 12, false},
	{"add_to_cart", 10, true}, {"checkout", 5, true}, {"login", 4, false}, {"logout", 4, false},
}

var sources = [...]string{"web", "web", "web", "web", "web", "ios", "ios", "android", "android"}

// event returns a user-activity record for "events".
func (g *generator) event(ts time.Time) *kgo.Record {
	user := fmt.Sprintf("user-%d", g.users.Uint64()+1)
	a := activity{User: user, TS: jsonTime(ts)}
	i, w := 0, g.rng.IntN(100) // the weights sum to 100
	for w >= actions[i].weight {
		w -= actions[i].weight
		i++
	}
	a.Action = actions[i].name
	if actions[i].amount {
		a.Amount = cents(math.Exp(3.2 + 0.8*g.rng.NormFloat64())) // median ~25
	}
	r := &kgo.Record{
		Topic:     EventsTopic,
		Key:       []byte(user),
		Value:     marshal(a),
		Timestamp: ts,
		Headers: []kgo.RecordHeader{
			{Key: "source", Value: []byte(sources[g.rng.IntN(len(sources))])},
			{Key: "trace-id", Value: g.traceID()},
		},
	}
	r.Partition = int32(g.hash.Partition(r, eventsPartitions))
	return r
}

// reading returns an ordinary record for "sensor-data".
func (g *generator) reading(ts time.Time) *kgo.Record {
	s := &g.sensors[g.rng.IntN(len(g.sensors))]
	r := &kgo.Record{
		Topic:     SensorTopic,
		Key:       []byte(s.id),
		Value:     marshal(s.read(g.rng, ts)),
		Timestamp: ts,
		Headers:   []kgo.RecordHeader{{Key: "firmware", Value: []byte(s.firmware)}},
	}
	r.Partition = int32(g.hash.Partition(r, sensorPartitions))
	return r
}

// odd returns an awkward record for "sensor-data" (see oddKind).
func (g *generator) odd(kind oddKind, ts time.Time) *kgo.Record {
	r := g.reading(ts)
	switch kind {
	case oddNullKey:
		r.Key = nil
		r.Partition = int32(g.rng.IntN(sensorPartitions))
		r.Headers = []kgo.RecordHeader{{Key: "gateway", Value: []byte("gw-legacy-2")}}
	case oddBinary:
		// A raw frame from a device that skipped the JSON encoder: magic,
		// version, payload. 0xff never occurs in UTF-8.
		v := []byte{0xff, 0xca, 0xfe, 0x00, 0x01}
		for range 19 {
			v = append(v, byte(g.rng.Uint32()))
		}
		r.Value = v
		r.Headers = []kgo.RecordHeader{{Key: "content-type", Value: []byte("application/octet-stream")}}
	case oddHostile:
		r.Value = []byte(hostileValue)
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "note", Value: []byte(hostileHeader)})
	}
	return r
}

// traceID returns 32 hex digits, like a W3C trace id.
func (g *generator) traceID() []byte {
	var b [16]byte
	for i := range b {
		b[i] = byte(g.rng.Uint32())
	}
	return hex.AppendEncode(nil, b[:])
}

// marshal encodes v, which holds only strings and finite floats, so
// encoding cannot fail.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("demo: encode record value: " + err.Error())
	}
	return b
}

// jsonTime formats t as the "ts" of a record value: UTC, milliseconds.
func jsonTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// cents rounds x to two decimals.
func cents(x float64) float64 { return math.Round(x*100) / 100 }
