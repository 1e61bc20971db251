package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseRegistryTLSAndTopics: the registry's TLS keys and the per-topic
// local schemas reach the profile, files relative to the config's folder,
// and Merge keeps the profile's topics.
func TestParseRegistryTLSAndTopics(t *testing.T) {
	doc := `
[clusters.p]
brokers = ["h:1"]
[clusters.p.registry]
url = "https://r:8081"
ca_file = "ca.pem"
cert_file = "/abs/client.pem"
key_file = "client.key"
insecure_skip_verify = false
[clusters.p.topics."orders.v1"]
value_proto = "shop/v1/order.proto"
value_message = "shop.v1.Order"
proto_path = ["protos", "/usr/include"]
key_avro = "key.avsc"
[clusters.p.topics.payments]
value_descriptor_set = "shop.pb"
value_message = "shop.v1.Payment"
`
	f, err := Parse([]byte(doc), "/etc/kbatch/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	wantTLS := TLS{CAFile: "/etc/kbatch/ca.pem", CertFile: "/abs/client.pem", KeyFile: "/etc/kbatch/client.key", InsecureSkipVerify: ptr(false)}
	if got := f.Clusters["p"].Registry.TLS; !reflect.DeepEqual(got, wantTLS) {
		t.Errorf("registry TLS %+v, want %+v", got, wantTLS)
	}
	want := map[string]TopicSchemas{
		"orders.v1": {
			Key:        LocalSchema{Avro: "/etc/kbatch/key.avsc"},
			Value:      LocalSchema{Proto: "/etc/kbatch/shop/v1/order.proto", Message: "shop.v1.Order"},
			ProtoPaths: []string{"/etc/kbatch/protos", "/usr/include"},
		},
		"payments": {Value: LocalSchema{DescriptorSet: "/etc/kbatch/shop.pb", Message: "shop.v1.Payment"}},
	}
	if got := f.Clusters["p"].Topics; !reflect.DeepEqual(got, want) {
		t.Errorf("topics %+v, want %+v", got, want)
	}
	if got := Merge(Connection{Brokers: []string{"x:1"}}, f.Clusters["p"]).Topics; !reflect.DeepEqual(got, want) {
		t.Errorf("merged topics %+v", got)
	}
}

func TestParseTopicSchemaErrors(t *testing.T) {
	for _, tt := range []struct{ table, want string }{
		{`value_avro = "a.avsc"` + "\n" + `value_proto = "a.proto"`, "give one of value_avro, value_proto and value_descriptor_set"},
		{`value_proto = "a.proto"`, "need value_message"},
		{`key_message = "a.B"`, "key_message names a message"},
		{`value_avro = "a.avsc"` + "\n" + `value_message = "a.B"`, "value_message is for Protobuf"},
		{`proto_path = "p"`, "no schema"},
		{`value_avsc = "a.avsc"`, "value_avsc"},
	} {
		doc := "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.topics.t]\n" + tt.table + "\n"
		_, err := Parse([]byte(doc), "c.toml")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.table, err, tt.want)
		}
	}
	doc := "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.registry]\nurl=\"https://r\"\ncert_file=\"c.pem\"\n"
	if _, err := Parse([]byte(doc), "c.toml"); err == nil || !strings.Contains(err.Error(), "cert_file and key_file go together") {
		t.Errorf("registry cert without key: %v", err)
	}
}
