package objstore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

func TestTranslate(t *testing.T) {
	cases := []struct {
		in                     string
		location, bucket, pref string
	}{
		{"s3://ckpt/queries/orders", "s3://ckpt/queries/orders", "s3://ckpt", "queries/orders"},
		{"s3a://ckpt/queries/orders/", "s3a://ckpt/queries/orders", "s3://ckpt", "queries/orders"},
		{"s3://ckpt/q?endpoint=http%3A%2F%2F127.0.0.1%3A9000&use_path_style=true&region=us-east-1",
			"s3://ckpt/q", "s3://ckpt?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=us-east-1&use_path_style=true", "q"},
		{"s3://ckpt", "s3://ckpt", "s3://ckpt", ""},
		{"gs://b/a//b/../c", "gs://b/a/c", "gs://b", "a/c"},
		{"abfss://ckpt@acct.dfs.core.windows.net/q1", "abfss://ckpt@acct.dfs.core.windows.net/q1",
			"azblob://ckpt?domain=blob.core.windows.net&storage_account=acct", "q1"},
		{"wasbs://ckpt@acct.blob.core.windows.net/q1", "wasbs://ckpt@acct.blob.core.windows.net/q1",
			"azblob://ckpt?domain=blob.core.windows.net&storage_account=acct", "q1"},
		{"wasb://ckpt@devstoreaccount1.blob.core.windows.net/q1?localemu=true&domain=127.0.0.1:10000&protocol=http",
			"wasb://ckpt@devstoreaccount1.blob.core.windows.net/q1",
			"azblob://ckpt?domain=127.0.0.1%3A10000&localemu=true&protocol=http&storage_account=devstoreaccount1", "q1"},
	}
	for _, c := range cases {
		got, err := Translate(c.in)
		if err != nil {
			t.Errorf("Translate(%q): %v", c.in, err)
			continue
		}
		if got.Location != c.location || got.Bucket != c.bucket || got.Prefix != c.pref {
			t.Errorf("Translate(%q) = %+v, want {%s %s %s}", c.in, got, c.location, c.bucket, c.pref)
		}
	}
}

func TestTranslateRefuses(t *testing.T) {
	cases := map[string]string{
		"ftp://host/ckpt":                            "unsupported scheme",
		"s3:///ckpt":                                 "no bucket",
		"s3://AKIA:secret@bucket/ckpt":               "credentials do not go in the URL",
		"abfss://acct.dfs.core.windows.net/q":        "want abfss://CONTAINER@ACCOUNT",
		"wasbs://c:key@acct.blob.core.windows.net/q": "want wasbs://CONTAINER@ACCOUNT",
		"gs://b/\x1b[31mred":                         "",
	}
	for in, want := range cases {
		_, err := Translate(in)
		if want == "" {
			if err != nil && strings.ContainsRune(err.Error(), 0x1b) {
				t.Errorf("Translate(%q): error carries a raw escape: %q", in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Translate(%q) = %v, want an error with %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Translate(%q): the error repeats the secret: %v", in, err)
		}
	}
}

func TestOpenUnknownSchemeIsUsage(t *testing.T) {
	_, err := Open(context.Background(), "hdfs://nn:8020/ckpt")
	var ue *offsets.UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("Open(hdfs://...) = %v, want a usage error", err)
	}
}

func TestIsURL(t *testing.T) {
	for in, want := range map[string]bool{
		"s3://b/p": true, "/data/ckpt": false, "ckpt": false, `C:\ckpt`: false, "rel/s3://x": true,
	} {
		if got := IsURL(in); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", in, got, want)
		}
	}
}

// A folder opens as a DirStore that sends no requests.
func TestOpenFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "metadata"), []byte(`{"id":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if b, err := s.ReadFile("metadata", 100); err != nil || string(b) != `{"id":"x"}` {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if _, err := s.ReadFile("offsets/0", 100); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
	if s.Requests() != 0 {
		t.Fatalf("a folder counted %d requests", s.Requests())
	}
}
