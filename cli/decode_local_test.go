package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// localOrderProto compiles testdata/schemas/shop/v1/order.proto and
// returns the shop.v1.Order message with its import.
func localOrderProto(t *testing.T) (protoreflect.MessageDescriptor, []protoreflect.FileDescriptor) {
	t.Helper()
	c := protocompile.Compiler{Resolver: &protocompile.SourceResolver{ImportPaths: []string{"testdata/schemas"}}}
	files, err := c.Compile(context.Background(), "shop/v1/order.proto")
	if err != nil {
		t.Fatal(err)
	}
	fd := files[0]
	return fd.Messages().ByName("Order"), []protoreflect.FileDescriptor{fd.Imports().Get(0).FileDescriptor, fd}
}

// localOrderProtoBytes is order 7 of "Bo" for EUR 12.
func localOrderProtoBytes(t *testing.T, md protoreflect.MessageDescriptor) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	m.Set(md.Fields().ByName("order_id"), protoreflect.ValueOfInt64(7))
	m.Set(md.Fields().ByName("customer"), protoreflect.ValueOfString("Bo"))
	money := md.Fields().ByName("total").Message()
	mm := dynamicpb.NewMessage(money)
	mm.Set(money.Fields().ByName("currency"), protoreflect.ValueOfString("EUR"))
	mm.Set(money.Fields().ByName("units"), protoreflect.ValueOfInt64(12))
	m.Set(md.Fields().ByName("total"), protoreflect.ValueOfMessage(mm))
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const localOrderProtoJSON = `{"order_id":"7","customer":"Bo","total":{"currency":"EUR","units":"12"}}`

// TestDecodeLocalSchemas: --value-avro, --value-proto with --proto-path,
// --value-descriptor-set and --key-avro decode without a registry; a
// framed value is read after its header and keeps its schema id.
func TestDecodeLocalSchemas(t *testing.T) {
	tc := testkafka.New(t)
	md, files := localOrderProto(t)
	set := &descriptorpb.FileDescriptorSet{}
	for _, f := range files {
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	setBytes, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	setFile := filepath.Join(dir, "shop.pb")
	if err := os.WriteFile(setFile, setBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	avroTopic, protoTopic := tc.Topic("local-avro", 1), tc.Topic("local-proto", 1)
	payload := orderPayload(t)
	tc.Produce(
		&kgo.Record{Topic: avroTopic, Partition: 0, Key: payload, Value: payload},
		&kgo.Record{Topic: avroTopic, Partition: 0, Value: framed(5, payload)},
		&kgo.Record{Topic: avroTopic, Partition: 0, Value: []byte{0xff}},
		&kgo.Record{Topic: protoTopic, Partition: 0, Value: localOrderProtoBytes(t, md)},
	)
	t.Setenv("KBATCH_REGISTRY", "")
	const avroJSON = `{"id":42,"customer":"Ada \u001b[31m\u202e","note":"door"}`

	stdout, stderr, code := runReplayCLI(t, tc, avroTopic+":0:earliest-latest", "--decode", "--value-avro", "testdata/schemas/order.avsc", "--key-avro", "testdata/schemas/order.avsc")
	if code != 0 {
		t.Fatalf("avro: exit %d, stderr %q", code, stderr)
	}
	lines := jsonLines(t, stdout)
	if len(lines) != 3 {
		t.Fatalf("avro: %d lines", len(lines))
	}
	if got := string(lines[0]["value_decoded"]); got != avroJSON {
		t.Errorf("value_decoded %s, want %s", got, avroJSON)
	}
	if got := string(lines[0]["key_decoded"]); got != avroJSON {
		t.Errorf("key_decoded %s, want %s", got, avroJSON)
	}
	if _, ok := lines[0]["value_schema_id"]; ok {
		t.Errorf("a local schema has no schema id: %v", lines[0])
	}
	if got := string(lines[1]["value_decoded"]); got != avroJSON || string(lines[1]["value_schema_id"]) != "5" {
		t.Errorf("framed value: value_decoded %s, value_schema_id %s", got, lines[1]["value_schema_id"])
	}
	if got := str(t, lines[2]["value_decode_error"]); !strings.HasPrefix(got, "order.avsc: bytes do not decode") {
		t.Errorf("value_decode_error %q", got)
	}

	for _, args := range [][]string{
		{"--value-proto", "testdata/schemas/shop/v1/order.proto", "--proto-path", "testdata/schemas", "--value-message", "shop.v1.Order"},
		{"--value-descriptor-set", setFile, "--value-message", "shop.v1.Order"},
	} {
		stdout, stderr, code := runReplayCLI(t, tc, append([]string{protoTopic + ":0:earliest-latest", "--decode"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		lines := jsonLines(t, stdout)
		if len(lines) != 1 || string(lines[0]["value_decoded"]) != localOrderProtoJSON {
			t.Errorf("%v: lines %v, want value_decoded %s", args, lines, localOrderProtoJSON)
		}
	}
}

// TestDecodeLocalUsage: local schema flag mistakes are exit 2, one line.
func TestDecodeLocalUsage(t *testing.T) {
	tc, topic := filledTopic(t, "local-usage", 1, 10, 1)
	t.Setenv("KBATCH_REGISTRY", "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--value-avro", "testdata/schemas/order.avsc"}, "are for --decode: add --decode"},
		{[]string{"--decode", "--value-avro", "testdata/schemas/order.avsc", "--value-proto", "x.proto"}, "--value-avro, --value-proto and --value-descriptor-set exclude each other"},
		{[]string{"--decode", "--key-proto", "testdata/schemas/shop/v1/order.proto"}, "need --key-message NAME"},
		{[]string{"--decode", "--value-message", "shop.v1.Order"}, "--value-message names a message of"},
		{[]string{"--decode", "--value-avro", "testdata/schemas/order.avsc", "--value-message", "x"}, "--value-message is for Protobuf"},
		{[]string{"--decode", "--value-avro", "testdata/schemas/order.avsc", "--proto-path", "testdata"}, "--proto-path is where"},
		{[]string{"--decode", "--value-avro", "testdata/schemas/missing.avsc"}, "missing.avsc"},
		{[]string{"--decode", "--value-proto", "testdata/schemas/shop/v1/order.proto", "--proto-path", "testdata/schemas", "--value-message", "shop.v1.Nope"}, "shop.v1.Nope"},
	} {
		stdout, stderr, code := runReplayCLI(t, tc, append([]string{topic + ":0:0-1"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
}
