package objstore

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
)

// do sends req with client and hands back an answer of status 2xx. Any
// other status is the error failed makes of the answer and the first MiB
// of its body, which do reads and closes; a request that fails on the way
// is client.Do's error.
func do(client *http.Client, req *http.Request, failed func(res *http.Response, body []byte) error) (*http.Response, error) {
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		defer res.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return nil, failed(res, body)
	}
	return res, nil
}

// serviceError is an object store's answer to a failed request, in one
// line: the service, the status, the error code and message the service
// gave (if any), and a hint for the user (if any). A 404 (a missing
// object, blob, bucket or container) is fs.ErrNotExist. The text stays
// raw: whoever prints the error escapes it (record.String), once.
type serviceError struct {
	service       string // "S3", "Azure Blob Storage", "Google Cloud Storage"
	status        int
	code, message string
	hint          string
}

// Unwrap makes a 404 fs.ErrNotExist.
func (e *serviceError) Unwrap() error {
	if e.status == http.StatusNotFound {
		return fs.ErrNotExist
	}
	return nil
}

func (e *serviceError) Error() string {
	s := fmt.Sprintf("%s answered %d %s", e.service, e.status, http.StatusText(e.status))
	if c := oneLine(e.code); c != "" {
		s += " (" + c + ")"
	}
	if m := oneLine(e.message); m != "" {
		s += ": " + m
	}
	if e.hint != "" {
		s += "; " + e.hint
	}
	return s
}

// xmlReply is the Code and Message of the XML error body S3 and Azure
// send; ok is false when body is not such XML (a HEAD has no body).
func xmlReply(body []byte) (code, message string, ok bool) {
	var reply struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(body, &reply) != nil {
		return "", "", false
	}
	return reply.Code, reply.Message, true
}

// jsonReplyMessage is the message of the JSON error body Google Cloud
// Storage sends, "" when body is not such JSON.
func jsonReplyMessage(body []byte) string {
	var reply struct {
		Error struct{ Message string } `json:"error"`
	}
	if json.Unmarshal(body, &reply) != nil {
		return ""
	}
	return reply.Error.Message
}

// oneLine is s, from a server, on one line. It stays raw: whoever prints
// an error escapes it (record.String), once.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
