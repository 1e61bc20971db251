package spark

import (
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

func TestJobReads(t *testing.T) {
	p := func(topic string, n int32) offsets.Partition { return offsets.Partition{Topic: topic, Partition: n} }
	j := Job{Ranges: []offsets.Range{
		{Partition: p("e", 0), From: 100, Until: 200},
		{Partition: p("e", 1), From: 5, Until: 5}, // empty: left out
		{Partition: p("e", 0), From: 500, Until: 600},
		{Partition: p("f", 2), From: 0, Until: 7},
	}}
	got := j.reads()
	if len(got) != 2 {
		t.Fatalf("%d reads, want 2 (e[0] twice): %+v", len(got), got)
	}
	want := []jobRead{
		{Assign: `{"e":[0],"f":[2]}`, Starting: `{"e":{"0":100},"f":{"2":0}}`, Ending: `{"e":{"0":200},"f":{"2":7}}`},
		{Assign: `{"e":[0]}`, Starting: `{"e":{"0":500}}`, Ending: `{"e":{"0":600}}`},
	}
	for i, w := range want {
		if got[i].Assign != w.Assign || got[i].Starting != w.Starting || got[i].Ending != w.Ending {
			t.Errorf("read %d = %s %s %s, want %s %s %s", i, got[i].Assign, got[i].Starting, got[i].Ending, w.Assign, w.Starting, w.Ending)
		}
	}
}

func TestJobSecurityHasNoSecret(t *testing.T) {
	j := Job{
		Ranges:    []offsets.Range{{Partition: offsets.Partition{Topic: "e", Partition: 0}, From: 1, Until: 2}},
		Bootstrap: []string{"b1:9093", "b2:9093"}, Output: "s3a://lake/out", Format: "parquet",
		Security: JobSecurity{TLS: true, CAFile: "/etc/ca.pem", SASLMechanism: "SCRAM-SHA-512", SASLUser: `svc"x`},
		Comment:  "Written by a test\x1b[31m.",
	}
	for name, text := range map[string]string{"pyspark": j.PySpark(), "scala": j.Scala()} {
		for _, want := range []string{`"kafka.bootstrap.servers"`, `"b1:9093,b2:9093"`, `"SASL_SSL"`, `"SCRAM-SHA-512"`,
			"ScramLoginModule", PasswordEnv, `"/etc/ca.pem"`, `"s3a://lake/out"`, `"failOnDataLoss"`, `{\"e\":{\"0\":1}}`} {
			if !strings.Contains(text, want) {
				t.Errorf("%s job lacks %s:\n%s", name, want, text)
			}
		}
		if strings.ContainsRune(text, 0x1b) {
			t.Errorf("%s job carries a raw escape from the comment", name)
		}
	}
}
