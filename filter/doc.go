// Package filter is kbatch's one expression language over records: a CEL
// expression (cel.dev/cel-go, the language of kafka-ui, Kubernetes and
// Envoy) compiled once and evaluated against each record.
//
// The expression sees these variables:
//
//	key, value   the decoded message where a schema applies (Avro, Protobuf,
//	             JSON Schema, local schemas), else the parsed JSON where the
//	             bytes are JSON, else a string where they are UTF-8, else
//	             bytes; null when absent
//	headers      map(string, string); a key that repeats keeps its last value
//	headers_list list of {"key": string, "value": string}, every header in order
//	topic        string
//	partition    int
//	offset       int
//	timestamp    timestamp
//	size         int: the bytes of key, value and headers
//
// A record whose evaluation fails (a missing field, a value of another
// type, a result that is not a bool) does not match; callers count such
// records and report the count once.
package filter
