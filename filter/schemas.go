package filter

import (
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/schema"
)

// Schemas reads keys and values with d, waiting for the registry when a
// schema id is not known yet (schema.Decoder.Decode): for headless runs,
// replay and --sink. A key or value that fails to decode is read from its
// bytes. A nil d decodes nothing.
func Schemas(d *schema.Decoder) Decoder {
	if d == nil {
		return nil
	}
	return schemaDecoder{d}
}

type schemaDecoder struct{ d *schema.Decoder }

func (s schemaDecoder) Decoded(r *record.Record, isKey bool) (string, bool) {
	b := r.Value
	if isKey {
		b = r.Key
	}
	res := s.d.Decode(r.Topic, isKey, b)
	return res.JSON, res.Status == schema.Decoded
}

func (s schemaDecoder) DecodedValue(r *record.Record, isKey bool, only []string, room *schema.Room) (any, []schema.Field, string, bool) {
	b := r.Value
	if isKey {
		b = r.Key
	}
	res := s.d.DecodeValue(r.Topic, isKey, b, only, room)
	return res.Value, res.Fields, res.JSON, res.Status == schema.Decoded
}
