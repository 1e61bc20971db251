// Package kafka is kbatch's one door to the Kafka protocol: the only
// package that talks to a cluster through the client libraries
// (github.com/IBM/sarama for metadata, offsets, groups and producing;
// franz-go's kgo client and kmsg codec for Fetch, whose answers it decodes
// from their bytes, and for the few requests sarama lacks: fetchconn.go,
// records.go). demo/ also imports kgo, for its embedded broker only.
//
// It builds the client (Client, from one ClientConfig: brokers, protocol
// version, TLS, SASL with SCRAM by github.com/xdg-go/scram) and explains a
// failure to reach the cluster in a sentence; it asks metadata
// (TopicPartitions, ClusterID), offsets (ListBounds, ListOffsetsForTimes)
// and consumer groups' committed offsets (GroupOffsets); it builds every
// Fetch request kbatch sends (NewFetchRequest, fetchVersion: one version
// table), names the partition errors worth another try (Retriable: one
// list), and decodes a partition's answer into record.Records with one
// tracker of aborted transactions (DecodeRecords, NoRecordsBetween); it
// produces (Producer, for replay --to-topic) and routes the libraries' own
// logs (LogLibrary, for watch --log).
//
// No type of a client library leaves the package: what it exports takes
// and returns record.Record, offsets' types, the standard library's and
// its own (ClientConfig, SASL, TokenProvider, Tuning, answer types), so no
// package above it depends on sarama or franz-go. internal/layers checks
// it (TestKafkaExportsNoLibraryType).
//
// What an answer means for a stream or a replay (where to go on, what to
// report) is decided above it, in consumer/ and replay/.
package kafka
