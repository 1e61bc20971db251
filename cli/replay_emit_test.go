package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replay --emit spark writes both jobs with exactly the resolved ranges,
// and reads no record.
func TestReplayEmitSpark(t *testing.T) {
	isolatedStore(t)
	c, topic := filledTopic(t, "emit", 2, 20, 10, 4)
	dir := filepath.Join(t.TempDir(), "job")
	b := strings.Join(c.Brokers, ",")
	out, errOut, code := runInProcess(t, "", "replay", topic+":0:2-8", topic+":1:earliest-latest", "--emit", "spark",
		"--out", dir, "--spark-output", "/lake/replay", "-b", b)
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "reading 10 offsets of 2 partition ranges") {
		t.Errorf("summary: %s", errOut)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("job folder: %v, %v; want mode 0700 (docs/design.md §2.7)", st.Mode(), err)
	}
	for _, name := range []string{emitPySpark, emitScala} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600 (docs/design.md §2.7)", name, st.Mode(), err)
		}
		b := readFile(t, filepath.Join(dir, name))
		text := string(b)
		for _, want := range []string{
			`"{\"` + topic + `\":[0,1]}"`,
			`"{\"` + topic + `\":{\"0\":2,\"1\":0}}"`,
			`"{\"` + topic + `\":{\"0\":8,\"1\":4}}"`,
			`"/lake/replay"`, `"parquet"`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %s:\n%s", name, want, text)
			}
		}
	}
}

func TestReplayEmitSparkUsage(t *testing.T) {
	isolatedStore(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--emit", "flink", "--out", dir, "--spark-output", "/x"}, "invalid --emit"},
		{[]string{"--emit", "spark", "--out", dir}, "needs --spark-output"},
		{[]string{"--emit", "spark", "--spark-output", "/x"}, "--out DIR"},
		{[]string{"--emit", "spark", "--out", dir, "--spark-output", "/x", "--spark-format", "csv"}, "invalid --spark-format"},
		{[]string{"--emit", "spark", "--out", dir, "--spark-output", "/x", "--to-topic", "t"}, "exclude each other"},
	} {
		_, errOut, code := runInProcess(t, "", append([]string{"replay", "e:0:1-2", "-b", "127.0.0.1:1"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
