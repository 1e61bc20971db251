// Package objstore opens a Spark checkpoint where Spark keeps it: a local
// folder, or an object store through gocloud.dev/blob — Amazon S3 (s3://,
// s3a://, s3n://), Google Cloud Storage (gs://) and Azure Blob Storage /
// ADLS Gen2 (abfss://, abfs://, wasbs://, wasb://) — with each cloud's
// default credential chain. It only ever reads: listings, reads of whole
// small files and attribute lookups, nothing else.
//
// S3 and Azure go through gocloud.dev's drivers; GCS through a read-only
// driver of its own on Google's JSON API (gcs.go), which links far less
// than gocloud.dev's gcsblob. It is the only importer of gocloud.dev and
// google.golang.org/api outside tests (the object-store suite,
// cli/objstore_real_test.go, writes with gocloud.dev's drivers).
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/s3blob"    // s3://
	"gocloud.dev/gcerrors"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
)

// RequestTimeout bounds one request to an object store.
const RequestTimeout = 30 * time.Second

// pageSize is how many names one listing request asks for; a Spark log
// folder holds about 100 batches (spark.sql.streaming.minBatchesToRetain)
// and as many checksum files, so one page is the rule.
const pageSize = 1000

// IsURL says whether loc names an object store (scheme://...) rather than a
// local folder. A Windows drive letter ("C:\...") is not a scheme.
func IsURL(loc string) bool {
	i := strings.Index(loc, "://")
	return i > 1
}

// Store is a checkpoint: a spark.Store, closed when done.
type Store interface {
	spark.Store
	// Requests is how many requests the store has sent so far (0 for a
	// local folder, which sends none).
	Requests() int64
	Close() error
}

// Open opens the checkpoint at loc: a local folder, or an object-store URL
// (see the package doc; Translate says how each is reached). A malformed
// URL or an unknown scheme is an *offsets.UsageError. Opening a bucket sends
// no request; the first read does.
func Open(ctx context.Context, loc string) (Store, error) {
	if !IsURL(loc) {
		s, err := spark.NewDirStore(loc)
		if err != nil {
			return nil, err
		}
		return dirStore{s}, nil
	}
	t, err := Translate(loc)
	if err != nil {
		return nil, &offsets.UsageError{Msg: err.Error()}
	}
	b, err := openBucket(ctx, t.Bucket)
	if err != nil {
		return nil, fmt.Errorf("spark checkpoint %s: %v", t.Location, err)
	}
	if t.Prefix != "" {
		b = blob.PrefixedBucket(b, t.Prefix+"/")
	}
	return &blobStore{b: b, loc: t.Location}, nil
}

// openBucket opens a bucket URL of Translate's: gs:// with gcsBucket,
// the others with gocloud.dev's drivers.
func openBucket(ctx context.Context, bucketURL string) (*blob.Bucket, error) {
	if !strings.HasPrefix(bucketURL, "gs://") {
		return blob.OpenBucket(ctx, bucketURL)
	}
	drv, err := openGCS(bucketURL)
	if err != nil {
		return nil, err
	}
	return blob.NewBucket(drv), nil
}

type dirStore struct{ *spark.DirStore }

func (dirStore) Requests() int64 { return 0 }
func (dirStore) Close() error    { return nil }

// Target is where a checkpoint URL is read: a gocloud.dev bucket URL and the
// checkpoint's prefix in it.
type Target struct {
	// Location is the URL as shown in messages: scheme, bucket and path,
	// without the query.
	Location string
	// Bucket is the gocloud.dev URL: "s3://bucket?region=...",
	// "gs://bucket?anonymous=true", "azblob://container?storage_account=...".
	Bucket string
	// Prefix is the checkpoint's path in the bucket, without slashes at
	// either end ("" for the bucket's root).
	Prefix string
}

// Translate maps a checkpoint URL to the bucket Open opens, in gocloud.dev's
// URL form:
//
//	s3://bucket/path?query   (also s3a://, s3n://) → s3://bucket?query
//	gs://bucket/path?query                         → gs://bucket?query
//	abfss://container@account.dfs.core.windows.net/path?query (also abfs://)
//	wasbs://container@account.blob.core.windows.net/path?query (also wasb://)
//	                                               → azblob://container?storage_account=account&domain=blob.core.windows.net&query
//	                                                 (no domain= when AZURE_STORAGE_DOMAIN is set: it applies)
//
// The query is gocloud.dev's: for S3 endpoint=, region=, use_path_style=true
// (MinIO, moto, …); for Azure domain=, protocol=, localemu=true (Azurite).
// For GCS it is anonymous=true (a public bucket, no credentials) and
// nothing else: gcsblob's access_id and private_key_path sign URLs, grpc
// and zonal choose gRPC, universe_domain leaves Google's own cloud, and
// kbatch does none of these. An ADLS Gen2 host (dfs.) is read through its
// Blob endpoint (blob.), which serves the same files.
func Translate(loc string) (Target, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return Target{}, fmt.Errorf("spark checkpoint %s: not a URL: %v", offsets.QuoteName(loc), errors.Unwrap(err))
	}
	prefix := strings.Trim(path.Clean("/"+u.Path), "/")
	q := u.Query()
	shown := url.URL{Scheme: u.Scheme, Host: u.Host, User: u.User, Path: "/" + prefix}
	t := Target{Location: strings.TrimSuffix(shown.Redacted(), "/"), Prefix: prefix}
	if u.Host == "" {
		return Target{}, fmt.Errorf("spark checkpoint %s: no bucket or container in the URL", offsets.QuoteName(loc))
	}
	switch strings.ToLower(u.Scheme) {
	case "s3", "s3a", "s3n":
		if u.User != nil {
			return Target{}, fmt.Errorf("spark checkpoint %s: credentials do not go in the URL; kbatch uses AWS's default credential chain", offsets.QuoteName(t.Location))
		}
		t.Bucket = (&url.URL{Scheme: "s3", Host: u.Host, RawQuery: q.Encode()}).String()
	case "gs":
		if u.User != nil {
			return Target{}, fmt.Errorf("spark checkpoint %s: credentials do not go in the URL; kbatch uses Google's default credentials", offsets.QuoteName(t.Location))
		}
		for _, k := range slices.Sorted(maps.Keys(q)) {
			v := q[k]
			if k != "anonymous" {
				return Target{}, fmt.Errorf("spark checkpoint %s: unknown query parameter %s (gs:// takes anonymous=true)", offsets.QuoteName(t.Location), offsets.QuoteName(k))
			}
			if _, err := strconv.ParseBool(v[len(v)-1]); err != nil || len(v) > 1 {
				return Target{}, fmt.Errorf("spark checkpoint %s: anonymous=%s: want anonymous=true or false, once", offsets.QuoteName(t.Location), offsets.QuoteName(strings.Join(v, ",")))
			}
		}
		t.Bucket = (&url.URL{Scheme: "gs", Host: u.Host, RawQuery: q.Encode()}).String()
	case "abfss", "abfs", "wasbs", "wasb":
		container := u.User.Username()
		host := u.Hostname()
		if _, hasPass := u.User.Password(); u.User == nil || container == "" || hasPass {
			return Target{}, fmt.Errorf("spark checkpoint %s: want %s://CONTAINER@ACCOUNT.%s/PATH", offsets.QuoteName(t.Location), u.Scheme, azureDomain(u.Scheme))
		}
		account, domain, ok := strings.Cut(host, ".")
		if !ok || account == "" {
			return Target{}, fmt.Errorf("spark checkpoint %s: want %s://CONTAINER@ACCOUNT.%s/PATH", offsets.QuoteName(t.Location), u.Scheme, azureDomain(u.Scheme))
		}
		if strings.HasPrefix(domain, "dfs.") {
			domain = "blob." + strings.TrimPrefix(domain, "dfs.")
		}
		if q.Get("storage_account") == "" {
			q.Set("storage_account", account)
		}
		// AZURE_STORAGE_DOMAIN is the default chain's endpoint (a sovereign
		// cloud, a private endpoint, Azurite): the URL's host does not
		// override it; a domain= on the URL does.
		if q.Get("domain") == "" && os.Getenv("AZURE_STORAGE_DOMAIN") == "" {
			q.Set("domain", domain)
		}
		t.Bucket = (&url.URL{Scheme: "azblob", Host: container, RawQuery: q.Encode()}).String()
	default:
		return Target{}, fmt.Errorf("spark checkpoint %s: unsupported scheme %q (want a folder, s3://, gs://, abfss:// or wasbs://)", offsets.QuoteName(t.Location), offsets.QuoteName(u.Scheme))
	}
	return t, nil
}

func azureDomain(scheme string) string {
	if strings.HasPrefix(scheme, "abfs") {
		return "dfs.core.windows.net"
	}
	return "blob.core.windows.net"
}

// blobStore is a checkpoint in a bucket under a prefix.
type blobStore struct {
	b        *blob.Bucket
	loc      string
	requests atomic.Int64
}

func (s *blobStore) Location() string        { return s.loc }
func (s *blobStore) Path(name string) string { return s.loc + "/" + name }
func (s *blobStore) Requests() int64         { return s.requests.Load() }
func (s *blobStore) Close() error            { return s.b.Close() }

func (s *blobStore) err(name string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		err = fs.ErrNotExist
	}
	return fmt.Errorf("spark checkpoint %s: %w", s.Path(name), err)
}

// ReadFile reads name with one GET, refusing a file over limit bytes.
func (s *blobStore) ReadFile(name string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	s.requests.Add(1)
	r, err := s.b.NewReader(ctx, name, nil)
	if err != nil {
		return nil, s.err(name, err)
	}
	defer r.Close()
	if r.Size() > limit {
		return nil, spark.TooLarge(s, name, limit)
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, s.err(name, err)
	}
	if int64(len(b)) > limit {
		return nil, spark.TooLarge(s, name, limit)
	}
	return b, nil
}

// ReadDir lists the folder name with a delimited listing, one request per
// page of pageSize names. An empty listing is a missing folder: object
// stores have no empty folders.
func (s *blobStore) ReadDir(name string) ([]spark.Entry, error) {
	prefix := ""
	if name != "" {
		prefix = strings.TrimSuffix(name, "/") + "/"
	}
	opts := &blob.ListOptions{Prefix: prefix, Delimiter: "/"}
	var out []spark.Entry
	token := blob.FirstPageToken
	for {
		ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
		s.requests.Add(1)
		objs, next, err := s.b.ListPage(ctx, token, pageSize, opts)
		cancel()
		if err != nil {
			return nil, s.err(name, err)
		}
		for _, o := range objs {
			base := strings.TrimSuffix(strings.TrimPrefix(o.Key, prefix), "/")
			if base == "" || strings.Contains(base, "/") {
				continue // the folder's own marker object, or not directly in it
			}
			out = append(out, spark.Entry{Name: base, Dir: o.IsDir, ModTime: o.ModTime})
		}
		if len(next) == 0 {
			break
		}
		token = next
	}
	if len(out) == 0 {
		return nil, s.err(name, fs.ErrNotExist)
	}
	return out, nil
}

// Stat looks name up with one attributes request (HEAD).
func (s *blobStore) Stat(name string) (spark.Entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	s.requests.Add(1)
	a, err := s.b.Attributes(ctx, name)
	if err != nil {
		return spark.Entry{}, s.err(name, err)
	}
	return spark.Entry{Name: path.Base(name), ModTime: a.ModTime}, nil
}
