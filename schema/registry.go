package schema

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kbatch-dev/kbatch/atomicfile"
)

// Limits on what a registry may send: a schema and its references are
// text of a few KiB in practice.
const (
	maxResponse = 8 << 20
	maxRefs     = 256
	maxRefDepth = 32
)

// fetched is one schema id as the registry describes it, with every
// reference resolved, dependencies before their dependants. It is what the
// disk cache stores.
type fetched struct {
	ID       int                 `json:"id"`
	Type     string              `json:"schemaType,omitempty"`
	Schema   string              `json:"schema"`
	Refs     []namedSchema       `json:"refs,omitempty"`
	Versions []sr.SubjectVersion `json:"versions,omitempty"`
}

type namedSchema struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
	Type    string `json:"schemaType,omitempty"`
	Schema  string `json:"schema"`
}

// schemaAnswer is a registry's answer for a schema id or a subject
// version. It is decoded here, not by sr.Client.SchemaByID or
// SchemaByVersion: sr.SchemaType knows AVRO, PROTOBUF and JSON only, so
// sr fails the whole answer of any other type (an answer with
// "schemaType":"XML" gives `unable to decode ok response body from GET
// "<url>": unknown schema type "XML"`), which would read as a registry
// that does not speak its API, instead of one schema id kbatch cannot
// decode.
type schemaAnswer struct {
	Schema     string               `json:"schema"`
	SchemaType string               `json:"schemaType"`
	References []sr.SchemaReference `json:"references"`
}

// httpError is a registry answer with a status of 300 or more (sr.Client
// takes every 2xx as an answer).
type httpError struct {
	Status int
	Text   string
}

func (e *httpError) Error() string {
	if e.Text != "" {
		return fmt.Sprintf("registry answered %d: %s", e.Status, e.Text)
	}
	return fmt.Sprintf("registry answered %d", e.Status)
}

// outageError marks a failure of the registry as a whole (unreachable,
// server errors, refused credentials, answers that are not its API), as
// opposed to one about a schema id.
type outageError struct{ error }

func (e outageError) Unwrap() error { return e.error }

// errNotFound marks an id the registry does not know.
var errNotFound = errors.New("not in the registry")

// errTooBig ends the reading of an answer longer than maxResponse.
var errTooBig = fmt.Errorf("registry answer over %d bytes", maxResponse)

type registry struct {
	base    string // without a trailing slash
	client  *sr.Client
	timeout time.Duration // of one request
	dir     string        // disk cache folder for this registry, or ""
}

// newRegistry is the client of the registry at base. Username, when set,
// goes as HTTP basic auth, else BearerToken, when set, as a bearer token.
func newRegistry(base string, opts Options) (*registry, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if opts.TLS != nil {
		tr.TLSClientConfig = opts.TLS
	}
	copts := []sr.ClientOpt{
		sr.URLs(base),
		sr.UserAgent("kbatch"),
		sr.HTTPClient(&http.Client{Transport: boundedTransport{tr}, Timeout: opts.Timeout}),
	}
	switch {
	case opts.Username != "":
		copts = append(copts, sr.BasicAuth(opts.Username, opts.Password))
	case opts.BearerToken != "":
		copts = append(copts, sr.BearerToken(opts.BearerToken))
	}
	cl, err := sr.NewClient(copts...)
	if err != nil {
		return nil, fmt.Errorf("registry URL %q: %w", oneLine(base, 80), err)
	}
	r := &registry{base: base, client: cl, timeout: opts.Timeout}
	if opts.CacheDir != "" {
		r.dir = cacheDirFor(opts.CacheDir, base)
	}
	return r, nil
}

// boundedTransport ends every answer body after maxResponse bytes with
// errTooBig: sr.Client reads a whole body into memory, with no bound of
// its own. With a transport that is not net/http's own, http.Client
// times a request out by a timer racing the request's context, so the
// text of a timeout varies from run to run; answerError words every
// timeout itself.
type boundedTransport struct{ http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(req)
	if err == nil {
		resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxResponse}
	}
	return resp, err
}

type boundedBody struct {
	io.ReadCloser
	left int64 // bytes still allowed; below 0 once the answer is too long
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooBig
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errTooBig
	}
	return n, err
}

// get reads the answer at path into v. Its error is errNotFound, an
// httpError about what was asked, or an outageError.
func (r *registry) get(ctx context.Context, path string, v any) error {
	var body []byte
	if err := r.client.Do(ctx, http.MethodGet, path, nil, &body); err != nil {
		return r.answerError(err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return outageError{fmt.Errorf("registry answer is not JSON: %w", err)}
	}
	return nil
}

// answerError sorts an error of sr.Client: an answer about what was asked,
// or a failure of the registry as a whole. The line never carries the
// request URL, which the user knows and which may hold a password.
func (r *registry) answerError(err error) error {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		if re.StatusCode == http.StatusNotFound {
			return errNotFound
		}
		var text string
		if len(re.Raw) > 0 {
			text = oneLine(re.Message, 120)
		}
		he := &httpError{Status: re.StatusCode, Text: text}
		if he.Status >= 500 || he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden {
			return outageError{he}
		}
		return he
	}
	if errors.Is(err, errTooBig) {
		return outageError{errTooBig}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return outageError{fmt.Errorf("registry unreachable: no answer within %s", r.timeout)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	} else if inner := errors.Unwrap(err); inner != nil {
		err = inner
	}
	return outageError{fmt.Errorf("registry unreachable: %w", err)}
}

// shownURL is the registry URL as messages show it: a password in it is
// hidden.
func (r *registry) shownURL() string {
	if u, err := url.Parse(r.base); err == nil {
		return u.Redacted()
	}
	return oneLine(r.base, 80)
}

// fetch reads schema id with its references and the subjects naming it,
// from the disk cache when useDisk and it holds the id.
func (r *registry) fetch(ctx context.Context, id int, useDisk bool) (f *fetched, fromDisk bool, err error) {
	if useDisk {
		if f := r.readDisk(id); f != nil {
			return f, true, nil
		}
	}
	var top schemaAnswer
	if err := r.get(ctx, "/schemas/ids/"+strconv.Itoa(id), &top); err != nil {
		return nil, false, err
	}
	f = &fetched{ID: id, Type: top.SchemaType, Schema: top.Schema}
	seen := map[string]bool{}
	if err := r.resolve(ctx, top.References, f, seen, 0); err != nil {
		return nil, false, err
	}
	// The subjects and versions naming this id; a registry without the
	// endpoint still decodes, only without a subject to show.
	if vs, err := r.client.SchemaVersionsByID(ctx, id); err == nil {
		f.Versions = vs
	}
	return f, false, nil
}

func (r *registry) resolve(ctx context.Context, refs []sr.SchemaReference, f *fetched, seen map[string]bool, depth int) error {
	if depth > maxRefDepth {
		return errors.New("schema references nested too deep")
	}
	for _, ref := range refs {
		key := ref.Subject + "\x00" + strconv.Itoa(ref.Version)
		if seen[key] {
			continue
		}
		seen[key] = true
		if len(seen) > maxRefs {
			return fmt.Errorf("more than %d schema references", maxRefs)
		}
		var s schemaAnswer
		v := strconv.Itoa(ref.Version)
		if ref.Version <= 0 {
			v = "latest"
		}
		err := r.get(ctx, "/subjects/"+url.PathEscape(ref.Subject)+"/versions/"+v, &s)
		if errors.Is(err, errNotFound) {
			return fmt.Errorf("reference %q (subject %q version %d) not in the registry", ref.Name, ref.Subject, ref.Version)
		}
		if err != nil {
			return err
		}
		if err := r.resolve(ctx, s.References, f, seen, depth+1); err != nil {
			return err
		}
		f.Refs = append(f.Refs, namedSchema{Name: ref.Name, Subject: ref.Subject, Version: ref.Version, Type: s.SchemaType, Schema: s.Schema})
	}
	return nil
}

// cacheDirFor is the disk cache folder of one registry URL under root:
// ids are per registry, so each URL gets its own folder.
func cacheDirFor(root, base string) string {
	h := sha256.Sum256([]byte(base))
	return filepath.Join(root, hex.EncodeToString(h[:8]))
}

func (r *registry) readDisk(id int) *fetched {
	if r.dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(r.dir, strconv.Itoa(id)+".json"))
	if err != nil || len(b) > maxResponse*4 {
		return nil
	}
	var f fetched
	if json.Unmarshal(b, &f) != nil || f.ID != id {
		return nil
	}
	return &f
}

// writeDisk stores f (0600 in a 0700 folder) with the atomic writer, so a
// reader never sees half a file. Failing to write only costs a refetch
// later.
func (r *registry) writeDisk(f *fetched) {
	if r.dir == "" {
		return
	}
	if os.MkdirAll(r.dir, 0o700) != nil {
		return
	}
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	_ = atomicfile.WriteFile(filepath.Join(r.dir, strconv.Itoa(f.ID)+".json"), b, 0o600)
}

// dropDisk removes a cached id whose text no longer compiles.
func (r *registry) dropDisk(id int) {
	if r.dir != "" {
		os.Remove(filepath.Join(r.dir, strconv.Itoa(id)+".json"))
	}
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
