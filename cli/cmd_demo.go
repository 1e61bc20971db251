package cli

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/demo"
)

func newDemoCommand(g *globalOptions) *cobra.Command {
	o := &watchOptions{}
	var brokerOnly bool
	var rate int
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch an embedded Kafka-protocol cluster with live demo traffic (no Kafka needed)",
		Long: `demo starts an in-process Kafka-protocol cluster (3 brokers on 127.0.0.1)
with topics "orders" (2 partitions, Avro through an embedded schema registry),
"events" (2 partitions) and "sensor-data" (3 partitions), a backlog of records,
and a generator writing bursty traffic, then runs watch on it with the
registry wired in, so the orders show decoded. Its offsets go to a throw-away
store unless --store is given.

With --broker-only it prints the bootstrap address and the registry URL and
serves until Ctrl-C, so kcat or a second kbatch can use them.`,
		Example: `  kbatch demo
  kbatch demo --broker-only
  kbatch demo --no-tui --until-end`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			d, err := demo.Start(ctx, demo.Options{Rate: rate})
			if err != nil {
				return fmt.Errorf("starting the demo cluster: %w", err)
			}
			defer d.Close()
			if brokerOnly {
				fmt.Fprintln(cmd.OutOrStdout(), d.Brokers()[0])
				fmt.Fprintln(cmd.OutOrStdout(), "registry "+d.RegistryURL())
				<-ctx.Done()
				return nil
			}
			g.brokers = d.Brokers()
			if o.dec.registry == "" && (!o.noTUI || o.dec.decode) {
				o.dec.registry = d.RegistryURL() // the orders' schemas: no flag needed
			}
			if g.store == "" {
				dir, err := os.MkdirTemp("", "kbatch-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				g.store = filepath.Join(dir, "offsets.db")
				o.tempStore = true
			}
			return runWatch(ctx, g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addWatchFlags(cmd, o)
	f := cmd.Flags()
	f.Lookup("topic").DefValue = "[" + strings.Join(demo.Topics(), ",") + "]"
	o.topics = demo.Topics()
	_ = f.Set("reset", "earliest")
	f.Lookup("reset").DefValue = "earliest"
	f.BoolVar(&brokerOnly, "broker-only", false, "only run the cluster: print its bootstrap address and serve until Ctrl-C")
	f.IntVar(&rate, "rate", 300, "mean records per second of the demo traffic")
	return cmd
}
