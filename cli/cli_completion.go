package cli

import (
	"context"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// completionTimeout bounds what one completion may spend asking the
// cluster: a shell is waiting. Past it, or on any error, the completion
// offers nothing and says nothing (the shell's stderr is not the place).
const completionTimeout = 2 * time.Second

// addCompletions gives the command tree its dynamic completions (cobra's
// `kbatch completion bash|zsh|fish` scripts call `kbatch __complete`):
// topics from the cluster, --cluster profiles from the config file,
// --name streams from the store, partitions in offset SPECs and replay
// RANGEs. Every lookup is read-only, never prompts, and fails silently.
func addCompletions(root *cobra.Command, g *globalOptions) {
	c := completer{g: g}
	must := func(err error) {
		if err != nil {
			panic(err) // a flag name typo in this file: caught by every test run
		}
	}
	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}

	must(root.RegisterFlagCompletionFunc("cluster", c.profiles))
	must(root.RegisterFlagCompletionFunc("name", c.streams))
	must(root.RegisterFlagCompletionFunc("sasl-mechanism", fixed("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")))
	must(root.RegisterFlagCompletionFunc("kafka-version", fixed("2.8.0", "3.0.0", "3.6.0", "3.9.0", "4.0.0")))

	sub := func(path ...string) *cobra.Command {
		cmd, _, err := root.Find(path)
		must(err)
		return cmd
	}
	// The root shares watch's flags (the same *pflag.Flag values), so
	// registering on watch serves "kbatch -t" too.
	watch := sub("watch")
	must(watch.RegisterFlagCompletionFunc("topic", c.topics))
	must(watch.RegisterFlagCompletionFunc("offset", c.offsetSpecs))
	for _, cmd := range []*cobra.Command{watch, sub("demo")} {
		must(cmd.RegisterFlagCompletionFunc("reset", fixed("earliest", "latest")))
		must(cmd.RegisterFlagCompletionFunc("ack", fixed("auto", "manual")))
		must(cmd.RegisterFlagCompletionFunc("format", fixed(sinkFormats...)))
		must(cmd.RegisterFlagCompletionFunc("from-spark", dirs))
	}
	demo := sub("demo")
	must(demo.RegisterFlagCompletionFunc("topic", fixed("orders", "events", "sensor-data")))
	must(demo.RegisterFlagCompletionFunc("offset", fixed("orders:", "orders=", "events:", "events=", "sensor-data:", "sensor-data=")))

	replay := sub("replay")
	replay.ValidArgsFunction = c.replayRanges
	must(replay.RegisterFlagCompletionFunc("to-topic", c.topics))
	must(replay.RegisterFlagCompletionFunc("isolation", fixed("committed", "uncommitted")))
	must(replay.RegisterFlagCompletionFunc("format", fixed(sinkFormats...)))

	sub("topics").ValidArgsFunction = c.topics
	sub("spark").ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	sub("offsets", "set").ValidArgsFunction = c.offsetSpecs
	must(sub("offsets", "export").RegisterFlagCompletionFunc("format", fixed("json", "spark", "kcat")))
	must(sub("offsets", "show").RegisterFlagCompletionFunc("format", fixed("text", "json", "spark")))
	must(sub("offsets", "import").RegisterFlagCompletionFunc("from-spark", dirs))
}

func dirs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// completer answers completion requests over the parsed global flags.
type completer struct{ g *globalOptions }

// quiet makes the global options safe for a completion: no warnings on
// stderr and never a password prompt (a prompt would hang the shell).
func (c completer) quiet() {
	c.g.stderr = io.Discard
	c.g.prompt = nil
}

// withCluster runs fn on a client of the configured cluster and returns
// its answer, or nil when there is no cluster, it cannot be reached, or
// the whole exchange takes longer than completionTimeout.
func (c completer) withCluster(fn func(*kafka.Client) []string) []string {
	c.quiet()
	cc, err := c.g.clientConfig()
	if err != nil {
		return nil
	}
	cc.DialTimeout, cc.FailFast = completionTimeout, true
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	// On the timeout the process ends with the completion, the dial with it.
	out, _ := dialWithin(ctx, cc, func(client *kafka.Client) ([]string, error) { return fn(client), nil })
	return out
}

// dialWithin connects with cc and runs fn on the client, in a goroutine:
// it returns fn's answer, or ctx's error when ctx ends first (the dial
// then finishes, and its client is closed, on its own).
func dialWithin[T any](ctx context.Context, cc kafka.ClientConfig, fn func(*kafka.Client) (T, error)) (T, error) {
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		client, err := kafka.Dial(cc)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer client.Close()
		v, err := fn(client)
		done <- answer{v, err}
	}()
	select {
	case a := <-done:
		return a.v, a.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// clusterTopics lists the cluster's topics (internal "__" ones left out)
// whose names are safe to hand to a shell: legal Kafka topic names
// (offsets.CheckTopic). A broker is a stranger (docs/design.md §2.7): anything else
// it sends is not offered to the shell.
func clusterTopics(client *kafka.Client) []string {
	topics, err := selectTopics(client, nil, false)
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(topics, func(t string) bool { return offsets.CheckTopic(t) != nil })
}

// safeWord reports whether s can be offered to a shell as it is: it is
// what offsets.ShellQuote leaves unquoted (letters, digits and ._-:,/@%+=).
// A completion is pasted into the command line, so a name with a space, a
// quote or a character the shell acts on (; | & * $ …) is not offered.
func safeWord(s string) bool { return offsets.ShellQuote(s) == s }

// withPrefix keeps the candidates that start with prefix.
func withPrefix(cands []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, s := range cands {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// topics completes a topic name (-t, --to-topic, kbatch topics TOPIC...).
func (c completer) topics(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return withPrefix(c.withCluster(clusterTopics), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// partitionsOf lists topic's partition numbers, sorted.
func partitionsOf(client *kafka.Client, topic string) []int32 {
	if offsets.CheckTopic(topic) != nil {
		return nil
	}
	ps, err := client.Partitions(topic)
	if err != nil {
		return nil
	}
	ps = slices.Clone(ps)
	slices.Sort(ps)
	return ps
}

// offsetSpecs completes an offset SPEC (-o, offsets set) one part at a
// time: "ev" → "events:" and "events="; "events:" → "events:0=",
// "events:1=", ...; "events=" → earliest and latest. After
// "events:1=" it offers nothing: bash splits words at both ':' and '=',
// and cobra's bash script cannot trim a word that holds both (it would
// insert "1=" again), so the offset is typed there.
func (c completer) offsetSpecs(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	noSpace := cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	if i := strings.IndexByte(toComplete, '='); i >= 0 {
		head := toComplete[:i+1]
		if strings.Contains(head, ":") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return withPrefix([]string{head + "earliest", head + "latest"}, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	if topic, _, ok := strings.Cut(toComplete, ":"); ok {
		cands := c.withCluster(func(client *kafka.Client) []string {
			var out []string
			for _, p := range partitionsOf(client, topic) {
				out = append(out, topic+":"+strconv.Itoa(int(p))+"=")
			}
			return out
		})
		return withPrefix(cands, toComplete), noSpace
	}
	var cands []string
	for _, t := range c.withCluster(clusterTopics) {
		cands = append(cands, t+":", t+"=")
	}
	return withPrefix(cands, toComplete), noSpace
}

// replayRanges completes a replay RANGE one part at a time: "ev" →
// "events:"; "events:" → "events:*:", "events:0:", ...; "events:0:" →
// "events:0:earliest-latest" and the partition's bounds as numbers,
// "events:0:120-4711" (for "*", the union of all partitions' is not one
// range, so only earliest-latest).
func (c completer) replayRanges(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	noSpace := cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	parts := strings.SplitN(toComplete, ":", 3)
	switch len(parts) {
	case 1:
		var cands []string
		for _, t := range c.withCluster(clusterTopics) {
			cands = append(cands, t+":")
		}
		return withPrefix(cands, toComplete), noSpace
	case 2:
		topic := parts[0]
		cands := c.withCluster(func(client *kafka.Client) []string {
			ps := partitionsOf(client, topic)
			if len(ps) == 0 {
				return nil
			}
			out := []string{topic + ":*:"}
			for _, p := range ps {
				out = append(out, topic+":"+strconv.Itoa(int(p))+":")
			}
			return out
		})
		return withPrefix(cands, toComplete), noSpace
	}
	topic, sel := parts[0], parts[1]
	head := topic + ":" + sel + ":"
	cands := []string{head + "earliest-latest"}
	if p, err := strconv.ParseInt(sel, 10, 32); err == nil && offsets.CheckTopic(topic) == nil {
		tp := offsets.Partition{Topic: topic, Partition: int32(p)}
		cands = append(cands, c.withCluster(func(client *kafka.Client) []string {
			b, err := kafka.ListBounds(client, []offsets.Partition{tp})
			if err != nil {
				return nil
			}
			bd, ok := b[tp]
			if !ok || bd.HighWatermark <= bd.LogStart {
				return nil
			}
			return []string{head + strconv.FormatInt(bd.LogStart, 10) + "-" + strconv.FormatInt(bd.HighWatermark, 10)}
		})...)
	}
	return withPrefix(cands, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// profiles completes --cluster with the config file's profile names.
func (c completer) profiles(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c.quiet()
	cfg, err := c.g.config()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for name := range cfg.Clusters {
		if safeWord(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// streams completes --name with the store's stream names. It opens the
// store read-only; while a watch holds it, it reads a consistent copy
// (offsets.OpenOptions.Snapshot), so completing never waits on or
// disturbs a running stream.
func (c completer) streams(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c.quiet()
	st, err := c.g.openStore(offsets.OpenOptions{ReadOnly: true, Snapshot: true})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer st.Close()
	infos, err := st.Streams()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, s := range infos {
		if safeWord(s.Name) {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}
