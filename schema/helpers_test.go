package schema

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	hamba "github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// frame puts the Confluent wire-format header before payload.
func frame(id int, payload []byte) []byte {
	b := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(id))
	return append(b, payload...)
}

// protoIndexes encodes a message-index path as Confluent's serializers do.
func protoIndexes(path ...int) []byte {
	if len(path) == 1 && path[0] == 0 {
		return []byte{0}
	}
	b := binary.AppendVarint(nil, int64(len(path)))
	for _, i := range path {
		b = binary.AppendVarint(b, int64(i))
	}
	return b
}

// avroOrderValue is one Order of testdata/order.avsc in hamba's generic
// form, and avroOrderJSON the JSON the decoder must show for it.
func avroOrderBytes(t testing.TB) []byte {
	t.Helper()
	s, err := hamba.Parse(readTestdata(t, "order.avsc"))
	if err != nil {
		t.Fatal(err)
	}
	// amount 1234.50 is the unscaled 123450 = 0x01E23A.
	// created 2026-12-01T20:00:00.123Z, day 2026-12-01 (20788 days).
	v := map[string]any{
		"id":       int64(42),
		"customer": "Ada \x1b[31m",
		"amount":   []byte{0x01, 0xE2, 0x3A},
		"created":  int64(1796155200123),
		"day":      int32(20788),
		"note":     map[string]any{"string": "leave at door"},
		"status":   "PAID",
		"tags":     []any{"a", "b"},
		"attrs":    map[string]any{"n": 3},
		"ref":      map[string]any{"string": "r-1"},
		"digest":   [2]byte{0xAB, 0x01},
	}
	b, err := hamba.Marshal(s, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const avroOrderJSON = `{"id":42,"customer":"Ada \u001b[31m","amount":"1234.50","created":"2026-12-01T20:00:00.123Z","day":"2026-12-01","note":"leave at door","status":"PAID","tags":["a","b"],"attrs":{"n":3},"ref":{"string":"r-1"},"digest":"«\u0001"}`

// protoFiles compiles testdata/proto/shop/v1/order.proto.
func protoFiles(t testing.TB) protoreflect.FileDescriptor {
	t.Helper()
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{"testdata/proto"}})}
	files, err := c.Compile(context.Background(), "shop/v1/order.proto")
	if err != nil {
		t.Fatal(err)
	}
	return files[0]
}

// protoBytes encodes the message md from its protojson text.
func protoBytes(t testing.TB, md protoreflect.MessageDescriptor, js string) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	if err := (protojson.UnmarshalOptions{Resolver: typesFor(md.ParentFile())}).Unmarshal([]byte(js), m); err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeRegistry is srfake with the test schemas registered: Avro order,
// and the schemas with references (see registerRefSchemas).
type fakeRegistry struct {
	*srfake.Registry
	avroID, protoID, jsonID int
}

func newFakeRegistry(t testing.TB) *fakeRegistry {
	t.Helper()
	reg := srfake.New()
	t.Cleanup(reg.Close)
	f := &fakeRegistry{Registry: reg}
	var err error
	if f.avroID, _, err = reg.RegisterSchema("orders-value", sr.Schema{Schema: readTestdata(t, "order.avsc")}); err != nil {
		t.Fatal(err)
	}
	refs := registerRefSchemas(t, refSubjects{
		common: "shop/v1/common.proto", order: "porders-value", address: "address", customer: "customers-value",
	}, func(subject string, s sr.Schema) (sr.SubjectSchema, error) {
		id, version, err := reg.RegisterSchema(subject, s)
		return sr.SubjectSchema{Subject: subject, Version: version, ID: id, Schema: s}, err
	})
	f.protoID, f.jsonID = refs.order.ID, refs.customer.ID
	return f
}

// refSubjects names the subjects of the schemas registerRefSchemas
// registers.
type refSubjects struct{ common, order, address, customer string }

// refSchemas are the test schemas that reference others, as registered:
// the Protobuf order imports common.proto, the JSON Schema customer
// refers to address.
type refSchemas struct{ common, order, address, customer sr.SubjectSchema }

// registerRefSchemas registers the schemas with references through
// register (a fake or a real registry), each reference naming the
// subject and version its target was registered as.
func registerRefSchemas(t testing.TB, subjects refSubjects, register func(subject string, s sr.Schema) (sr.SubjectSchema, error)) refSchemas {
	t.Helper()
	add := func(subject string, s sr.Schema) sr.SubjectSchema {
		t.Helper()
		ss, err := register(subject, s)
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	var r refSchemas
	r.common = add(subjects.common, sr.Schema{Schema: readTestdata(t, "proto/shop/v1/common.proto"), Type: sr.TypeProtobuf})
	r.order = add(subjects.order, sr.Schema{
		Schema: readTestdata(t, "proto/shop/v1/order.proto"), Type: sr.TypeProtobuf,
		References: []sr.SchemaReference{{Name: "shop/v1/common.proto", Subject: r.common.Subject, Version: r.common.Version}},
	})
	r.address = add(subjects.address, sr.Schema{Schema: readTestdata(t, "address.schema.json"), Type: sr.TypeJSON})
	r.customer = add(subjects.customer, sr.Schema{
		Schema: readTestdata(t, "customer.schema.json"), Type: sr.TypeJSON,
		References: []sr.SchemaReference{{Name: "address.schema.json", Subject: r.address.Subject, Version: r.address.Version}},
	})
	return r
}

func newDecoder(t testing.TB, o Options) *Decoder {
	t.Helper()
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

func wantDecoded(t *testing.T, r Result, json string) {
	t.Helper()
	if r.Status != Decoded || r.Reason != "" {
		t.Fatalf("status %v reason %q, want decoded", r.Status, r.Reason)
	}
	if r.JSON != json {
		t.Fatalf("JSON\n got %s\nwant %s", r.JSON, json)
	}
}

func wantFailed(t *testing.T, r Result, reason string) {
	t.Helper()
	if r.Status != Failed || !strings.Contains(r.Reason, reason) {
		t.Fatalf("status %v reason %q, want failed with %q", r.Status, r.Reason, reason)
	}
	if strings.ContainsAny(r.Reason, "\n\r") {
		t.Fatalf("reason spans lines: %q", r.Reason)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
