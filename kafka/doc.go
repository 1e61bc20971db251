// Package kafka is kbatch's one door to the Kafka protocol: the only
// package that imports the client libraries (github.com/IBM/sarama for
// every request but Fetch; franz-go's kgo client and kmsg codec for
// Fetch, whose answers it decodes from their bytes: fetchconn.go,
// records.go).
//
// It builds the client (Client, from one ClientConfig: brokers, protocol
// version, TLS, SASL with SCRAM by github.com/xdg-go/scram) and explains a
// failure to reach the cluster in a sentence; it asks metadata
// (TopicPartitions, ClusterID), offsets (ListBounds, ListOffsetsForTimes)
// and consumer groups' committed offsets (GroupOffsets); it builds every
// Fetch request kbatch sends (NewFetchRequest, FetchVersion: one version
// table), names the partition errors worth another try (Retriable: one
// list), and decodes a partition's answer into record.Records with one
// tracker of aborted transactions (DecodeRecords, NoRecordsBetween); it
// produces (Producer, for replay --to-topic) and routes the libraries' own
// logs (LogLibrary, for watch --log). Above it, kbatch passes record.Record,
// *Client and its own answer types, never the library's.
//
// What an answer means for a stream or a replay (where to go on, what to
// report) is decided above it, in consumer/ and replay/.
package kafka
