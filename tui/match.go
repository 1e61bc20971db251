package tui

import "github.com/kbatch-dev/kbatch/schema"

// The one matcher of the screen: the records filter (/) and any search
// over records use matchText and matches, so what a record matches is
// what the screen shows of it.

// matchText is the text r's key (isKey) or value is matched against: the
// decoded JSON (in text) when it decodes with a schema, else the bytes as
// they are (in raw; nil for a null key or value). It decodes r when it has
// not been yet, never waiting for a registry: a record whose schema is
// still on its way matches its raw bytes until the schema arrives. d may
// be nil (no decoder): every record matches its bytes.
func (d *decoding) matchText(r *record, isKey bool) (text string, raw []byte) {
	if res := d.result(r, isKey, false); res.Status == schema.Decoded {
		return res.JSON, nil
	}
	if isKey {
		return "", r.Key.Data
	}
	return "", r.Value.Data
}

// matches reports whether r's key or value (matchText) holds q, ASCII
// letters compared without case. An empty q matches everything.
func (d *decoding) matches(r *record, q string) bool {
	if q == "" {
		return true
	}
	for _, isKey := range [2]bool{true, false} {
		if text, raw := d.matchText(r, isKey); containsFold(text, q) || containsFold(raw, q) {
			return true
		}
	}
	return false
}
