package cli

import "testing"

// TestRackPrecedence: the client's rack (KIP-392) comes from --rack, then
// KBATCH_RACK, then the profile's rack, like the other connection
// settings, and reaches the client configuration.
func TestRackPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.toml", `
[clusters.prod]
brokers = ["prod1:9093"]
rack = "eu-west-1a"
`, 0o600)
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"-b", "h:1"}, ""},
		{nil, []string{"--cluster", "prod"}, "eu-west-1a"},
		{map[string]string{"KBATCH_RACK": "eu-west-1b"}, []string{"--cluster", "prod"}, "eu-west-1b"},
		{map[string]string{"KBATCH_RACK": "eu-west-1b"}, []string{"--cluster", "prod", "--rack", "eu-west-1c"}, "eu-west-1c"},
	} {
		g, _ := testOptions(t, tc.env, append([]string{"--config", cfg}, tc.args...)...)
		cc, err := g.clientConfig()
		if err != nil {
			t.Fatalf("%v %v: %v", tc.env, tc.args, err)
		}
		if cc.Rack != tc.want {
			t.Errorf("%v %v: rack %q, want %q", tc.env, tc.args, cc.Rack, tc.want)
		}
	}
}
