package spark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kbatch-dev/kbatch/offsets"
)

// Job is a Spark batch job that reads exact offset ranges from Kafka and
// writes them to a path: what kbatch replay --emit spark hands to Spark
// for a replay too big for one machine.
type Job struct {
	// Ranges are the offset ranges [From, Until) to read; empty ones are
	// left out. One partition may have several.
	Ranges []offsets.Range
	// Bootstrap is kafka.bootstrap.servers.
	Bootstrap []string
	// Output is where the job writes, Format "parquet" or "json".
	Output, Format string
	// Security is the connection's security, without secrets.
	Security JobSecurity
	// Comment is a line or two put at the top of each file (how it was
	// made).
	Comment string
	// Where, when set, is a Spark SQL condition the job keeps records by
	// (DataFrame.where) before it writes them.
	Where string
}

// JobSecurity is how the job reaches the cluster. Secrets are never
// written: the job reads the SASL password from the environment variable
// PasswordEnv when it runs.
type JobSecurity struct {
	TLS bool
	// CAFile is a PEM file of CA certificates (ssl.truststore.type PEM).
	CAFile string
	// ClientCert is true when the connection uses a client certificate:
	// the job then reads the path of a PEM file holding the client key and
	// certificate (ssl.keystore.type PEM) from KeystoreEnv.
	ClientCert bool
	// SASLMechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; "" for none.
	SASLMechanism, SASLUser string
	// NoHostnameCheck turns off the broker host name check
	// (ssl.endpoint.identification.algorithm empty).
	NoHostnameCheck bool
}

// Environment variables the emitted jobs read their secrets from.
const (
	PasswordEnv = "KAFKA_SASL_PASSWORD"
	KeystoreEnv = "KAFKA_SSL_KEYSTORE_LOCATION"
)

// jobRead is one spark.read of the job: a set of partitions, each at most
// once (Spark reads one range per partition per DataFrame).
type jobRead struct {
	Assign, Starting, Ending string
	Ranges                   []offsets.Range
}

// reads splits the job's ranges into reads, each partition at most once
// per read, in the order given.
func (j Job) reads() []jobRead {
	var groups [][]offsets.Range
	for _, r := range j.Ranges {
		if r.Until <= r.From {
			continue
		}
		placed := false
		for i, g := range groups {
			if !slices.ContainsFunc(g, func(x offsets.Range) bool { return x.Partition == r.Partition }) {
				groups[i] = append(g, r)
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, []offsets.Range{r})
		}
	}
	out := make([]jobRead, 0, len(groups))
	for _, g := range groups {
		start, end := Offsets{}, Offsets{}
		assign := map[string][]int32{}
		for _, r := range g {
			start[r.Partition], end[r.Partition] = r.From, r.Until
			assign[r.Partition.Topic] = append(assign[r.Partition.Topic], r.Partition.Partition)
		}
		for _, ps := range assign {
			slices.Sort(ps)
		}
		a, _ := json.Marshal(assign) // map keys are sorted
		out = append(out, jobRead{Assign: string(a), Starting: StartingOffsetsJSON(start, nil), Ending: EndingOffsetsJSON(end, nil), Ranges: g})
	}
	return out
}

// options are the Kafka source options every read shares, in order, as
// (name, value expression) pairs; exprs are literal strings except the
// JAAS line, which each language builds from the password variable.
func (j Job) options() [][2]string {
	opts := [][2]string{{"kafka.bootstrap.servers", strings.Join(j.Bootstrap, ",")}}
	proto := "PLAINTEXT"
	switch s := j.Security; {
	case s.TLS && s.SASLMechanism != "":
		proto = "SASL_SSL"
	case s.TLS:
		proto = "SSL"
	case s.SASLMechanism != "":
		proto = "SASL_PLAINTEXT"
	}
	if proto != "PLAINTEXT" {
		opts = append(opts, [2]string{"kafka.security.protocol", proto})
	}
	if j.Security.CAFile != "" {
		opts = append(opts, [2]string{"kafka.ssl.truststore.type", "PEM"}, [2]string{"kafka.ssl.truststore.location", j.Security.CAFile})
	}
	if j.Security.NoHostnameCheck {
		opts = append(opts, [2]string{"kafka.ssl.endpoint.identification.algorithm", ""})
	}
	if j.Security.SASLMechanism != "" {
		opts = append(opts, [2]string{"kafka.sasl.mechanism", j.Security.SASLMechanism})
	}
	return append(opts, [2]string{"failOnDataLoss", "true"}, [2]string{"includeHeaders", "true"})
}

// loginModule is the JAAS login module of a SASL mechanism.
func loginModule(mech string) string {
	if strings.HasPrefix(mech, "SCRAM-") {
		return "org.apache.kafka.common.security.scram.ScramLoginModule"
	}
	return "org.apache.kafka.common.security.plain.PlainLoginModule"
}

// lit renders s as a string literal that Python and Scala both read as s
// (JSON's escapes are a subset of both).
func lit(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// describe lists the ranges as comment lines.
func (j Job) describe(prefix string) string {
	var b strings.Builder
	for _, r := range j.Ranges {
		if r.Until > r.From {
			fmt.Fprintf(&b, "%s  %s [%d, %d)  %d offsets\n", prefix, offsets.SafeName(r.Partition.String()), r.From, r.Until, r.Until-r.From)
		}
	}
	return b.String()
}

func commentLines(prefix, text string) string {
	if text == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		b.WriteString(prefix + " " + offsets.SafeName(l) + "\n")
	}
	return b.String()
}

// PySpark renders the job as a PySpark script.
func (j Job) PySpark() string {
	var b strings.Builder
	b.WriteString("#!/usr/bin/env python3\n")
	b.WriteString(commentLines("#", j.Comment))
	b.WriteString("# It reads exactly these offset ranges, [from, until), and nothing else:\n")
	b.WriteString(j.describe("#"))
	b.WriteString("# and writes them (topic, partition, offset, timestamp, timestampType, key, value,\n")
	b.WriteString("# headers) as " + j.Format + " to OUTPUT; the write fails if OUTPUT exists.\n#\n")
	b.WriteString("# Run with the Kafka connector of your Spark version, e.g.:\n")
	b.WriteString("#   spark-submit --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0 kbatch_replay.py\n")
	if j.Security.SASLMechanism != "" {
		b.WriteString("# The SASL password is read from $" + PasswordEnv + " when the job runs.\n")
	}
	if j.Security.ClientCert {
		b.WriteString("# The client key and certificate: a PEM file (key and certificate chain) whose path is $" + KeystoreEnv + ".\n")
	}
	if j.Security.CAFile != "" {
		b.WriteString("# ssl.truststore.location must exist on the driver and every executor.\n")
	}
	b.WriteString("import os\n\nfrom pyspark.sql import SparkSession\n\n")
	b.WriteString("OUTPUT = " + lit(j.Output) + "\n")
	b.WriteString("FORMAT = " + lit(j.Format) + "\n")
	if j.Where != "" {
		b.WriteString("WHERE = " + lit(j.Where) + "\n")
	}
	b.WriteString("\n")
	b.WriteString("KAFKA = {\n")
	for _, o := range j.options() {
		b.WriteString("    " + lit(o[0]) + ": " + lit(o[1]) + ",\n")
	}
	b.WriteString("}\n")
	if m := j.Security.SASLMechanism; m != "" {
		b.WriteString("_password = os.environ[" + lit(PasswordEnv) + "].replace(\"\\\\\", \"\\\\\\\\\").replace('\"', '\\\\\"')\n")
		b.WriteString("KAFKA[\"kafka.sasl.jaas.config\"] = (\n")
		b.WriteString("    " + lit(loginModule(m)+" required username=") + "\n")
		b.WriteString("    + '\"' + " + lit(j.Security.SASLUser) + ".replace(\"\\\\\", \"\\\\\\\\\").replace('\"', '\\\\\"') + '\"'\n")
		b.WriteString("    + ' password=\"' + _password + '\";'\n)\n")
	}
	if j.Security.ClientCert {
		b.WriteString("KAFKA[\"kafka.ssl.keystore.type\"] = \"PEM\"\n")
		b.WriteString("KAFKA[\"kafka.ssl.keystore.location\"] = os.environ[" + lit(KeystoreEnv) + "]\n")
	}
	b.WriteString("\n# One read per set of partitions: Spark reads one range per partition per read.\nREADS = [\n")
	for _, r := range j.reads() {
		b.WriteString("    {\"assign\": " + lit(r.Assign) + ", \"startingOffsets\": " + lit(r.Starting) + ", \"endingOffsets\": " + lit(r.Ending) + "},\n")
	}
	b.WriteString("]\n\n")
	b.WriteString(`spark = SparkSession.builder.appName("kbatch-replay").getOrCreate()
df = None
for r in READS:
    d = spark.read.format("kafka").options(**KAFKA).options(**r).load()
    df = d if df is None else df.unionByName(d)
`)
	if j.Where != "" {
		b.WriteString("df = df.where(WHERE)\n")
	}
	b.WriteString(`df.write.mode("errorifexists").format(FORMAT).save(OUTPUT)
spark.stop()
`)
	return b.String()
}

// Scala renders the job as a Scala object (KbatchReplay) for spark-submit
// or a notebook.
func (j Job) Scala() string {
	var b strings.Builder
	b.WriteString(commentLines("//", j.Comment))
	b.WriteString("// It reads exactly these offset ranges, [from, until), and nothing else:\n")
	b.WriteString(j.describe("//"))
	b.WriteString("// and writes them as " + j.Format + " to output; the write fails if it exists.\n")
	if j.Security.SASLMechanism != "" {
		b.WriteString("// The SASL password is read from $" + PasswordEnv + " when the job runs.\n")
	}
	if j.Security.ClientCert {
		b.WriteString("// The client key and certificate: a PEM file whose path is $" + KeystoreEnv + ".\n")
	}
	b.WriteString("import org.apache.spark.sql.{DataFrame, SparkSession}\n\n")
	b.WriteString("object KbatchReplay {\n")
	b.WriteString("  val output = " + lit(j.Output) + "\n")
	b.WriteString("  val format = " + lit(j.Format) + "\n")
	if j.Where != "" {
		b.WriteString("  val where = " + lit(j.Where) + "\n")
	}
	b.WriteString("\n")
	b.WriteString("  def kafka: Map[String, String] = {\n    var m = Map[String, String](\n")
	for i, o := range j.options() {
		sep := ","
		if i == len(j.options())-1 {
			sep = ""
		}
		b.WriteString("      " + lit(o[0]) + " -> " + lit(o[1]) + sep + "\n")
	}
	b.WriteString("    )\n")
	if m := j.Security.SASLMechanism; m != "" {
		b.WriteString("    def q(s: String) = \"\\\"\" + s.replace(\"\\\\\", \"\\\\\\\\\").replace(\"\\\"\", \"\\\\\\\"\") + \"\\\"\"\n")
		b.WriteString("    m += \"kafka.sasl.jaas.config\" -> (" + lit(loginModule(m)+" required username=") +
			" + q(" + lit(j.Security.SASLUser) + ") + \" password=\" + q(sys.env(" + lit(PasswordEnv) + ")) + \";\")\n")
	}
	if j.Security.ClientCert {
		b.WriteString("    m += \"kafka.ssl.keystore.type\" -> \"PEM\"\n")
		b.WriteString("    m += \"kafka.ssl.keystore.location\" -> sys.env(" + lit(KeystoreEnv) + ")\n")
	}
	b.WriteString("    m\n  }\n\n")
	b.WriteString("  // One read per set of partitions: Spark reads one range per partition per read.\n")
	b.WriteString("  val reads: Seq[Map[String, String]] = Seq(\n")
	rs := j.reads()
	for i, r := range rs {
		sep := ","
		if i == len(rs)-1 {
			sep = ""
		}
		b.WriteString("    Map(\"assign\" -> " + lit(r.Assign) + ", \"startingOffsets\" -> " + lit(r.Starting) + ", \"endingOffsets\" -> " + lit(r.Ending) + ")" + sep + "\n")
	}
	b.WriteString("  )\n\n")
	b.WriteString(`  def main(args: Array[String]): Unit = {
    val spark = SparkSession.builder.appName("kbatch-replay").getOrCreate()
    val df: DataFrame = reads
      .map(r => spark.read.format("kafka").options(kafka).options(r).load())
      .reduce(_ unionByName _)
`)
	if j.Where != "" {
		b.WriteString("      .where(where)\n")
	}
	b.WriteString(`    df.write.mode("errorifexists").format(format).save(output)
    spark.stop()
  }
}
`)
	return b.String()
}
