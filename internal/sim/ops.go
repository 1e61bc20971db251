// Package sim is a randomized simulation of kbatch's direct stream: seeded,
// reproducible histories of produce, crash, restart with changed flags,
// seek, pause, manual acks, retention, new partitions, leader moves and
// broker outages against an in-process 3-broker kfake cluster, with every
// promise of docs/design.md §2 checked after each history (Check).
//
// A history is a list of operations drawn from a seed (Generate); Run
// carries them out against a fresh cluster and store, and returns what it
// saw. The operations are the same for the same seed; their timing
// against the stream's goroutines is not, which is the point: a failing
// seed is run again with KBATCH_SIM_SEED and usually fails the same way.
package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Kind is an operation's kind.
type Kind string

// The operations of a history.
const (
	OpProduce    Kind = "produce"     // Part, N records of Size class; Txn: "", "commit", "abort"
	OpStart      Kind = "start"       // Flags
	OpStop       Kind = "stop"        // clean Close
	OpCrash      Kind = "crash"       // Crash mode
	OpSeek       Kind = "seek"        // Part, Seek spec
	OpPause      Kind = "pause"       // Part (-1: all)
	OpResume     Kind = "resume"      // Part (-1: all)
	OpAck        Kind = "ack"         // the batch waiting for a manual ack
	OpRetention  Kind = "retention"   // Part, Frac of the way from log start to high watermark
	OpAddParts   Kind = "add-parts"   // N partitions more
	OpMoveLeader Kind = "move-leader" // Part to Node; Part -1: shuffle every leader
	OpBrokerDown Kind = "broker-down" // Node down (Mode "drop" or "stall") for Wait
	OpSet        Kind = "offsets-set" // while stopped: Part's stored position to Frac of its log
	OpWait       Kind = "wait"        // Wait
)

// Crash modes: when the process dies.
const (
	CrashNow       = "now"        // at once
	CrashAfterPlan = "after-plan" // right after the next batch is written ahead
	CrashInProcess = "in-process" // while the next batch is processed
	CrashAtSeek    = "at-seek"    // the next seek's store write is the first refused
)

// Flags are a run's command-line flags.
type Flags struct {
	MaxPerPartition int
	Interval        time.Duration
	Reset           string // earliest|latest
	ManualAck       bool
	Uncommitted     bool
	// Explicit are -o specs: "P=OFFSET", "P=earliest", "P=latest", "P=-N".
	Explicit []string
	// UntilEnd and MaxBatches make the run end by itself (liveness is
	// checked); the driver acks manual batches itself then.
	UntilEnd   bool
	MaxBatches int
}

func (f Flags) String() string {
	s := fmt.Sprintf("--max-per-partition %d --interval %s --reset %s", f.MaxPerPartition, f.Interval, f.Reset)
	if f.ManualAck {
		s += " --ack manual"
	}
	if f.Uncommitted {
		s += " --isolation uncommitted"
	}
	for _, e := range f.Explicit {
		s += " -o " + e
	}
	if f.UntilEnd {
		s += " --until-end"
	}
	if f.MaxBatches > 0 {
		s += fmt.Sprintf(" --batches %d", f.MaxBatches)
	}
	return s
}

// Op is one operation of a history.
type Op struct {
	Kind  Kind
	Part  int32
	N     int
	Size  string // record sizes: "small", "mixed", "large", "huge" (1 MiB)
	Txn   string
	Crash string
	Seek  string // "offset", "earliest", "latest", "-N", "@time"
	Frac  float64
	Node  int32
	Mode  string
	Wait  time.Duration
	Flags Flags
}

func (o Op) String() string {
	switch o.Kind {
	case OpProduce:
		s := fmt.Sprintf("produce p%d n=%d size=%s", o.Part, o.N, o.Size)
		if o.Txn != "" {
			s += " txn=" + o.Txn
		}
		return s
	case OpStart:
		return "start " + o.Flags.String()
	case OpCrash:
		return "crash " + o.Crash
	case OpSeek:
		if o.Part < 0 {
			return fmt.Sprintf("seek all %s frac=%.2f n=%d", o.Seek, o.Frac, o.N)
		}
		return fmt.Sprintf("seek p%d %s frac=%.2f n=%d", o.Part, o.Seek, o.Frac, o.N)
	case OpPause, OpResume:
		if o.Part < 0 {
			return string(o.Kind) + " all"
		}
		return fmt.Sprintf("%s p%d", o.Kind, o.Part)
	case OpRetention, OpSet:
		return fmt.Sprintf("%s p%d frac=%.2f", o.Kind, o.Part, o.Frac)
	case OpAddParts:
		return fmt.Sprintf("add-parts +%d", o.N)
	case OpMoveLeader:
		if o.Part < 0 {
			return "move-leader shuffle"
		}
		return fmt.Sprintf("move-leader p%d → broker %d", o.Part, o.Node)
	case OpBrokerDown:
		return fmt.Sprintf("broker-down %d %s for %s", o.Node, o.Mode, o.Wait)
	case OpWait:
		return fmt.Sprintf("wait %s", o.Wait)
	}
	return string(o.Kind)
}

// History is a generated history: the topic's shape and its operations.
type History struct {
	Seed       uint64
	Partitions int32
	// Busy are the partitions producers write to most; the others are
	// idle, and their leader is a broker that leads no busy partition.
	Busy []int32
	// Codec is what the producers compress their batches with: none,
	// gzip, snappy, lz4 or zstd (drawn apart from the ops, so a seed's
	// ops are what they were before the codec was drawn).
	Codec string
	Ops   []Op
}

func (h History) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d partitions, busy %v", h.Seed, h.Partitions, h.Busy)
	if h.Codec != "" && h.Codec != "none" {
		fmt.Fprintf(&b, ", codec %s", h.Codec)
	}
	b.WriteString("\n")
	for i, o := range h.Ops {
		fmt.Fprintf(&b, "  %3d %s\n", i, o)
	}
	return b.String()
}

// Generate draws a history from seed. The final drain (a run with
// --until-end that must end) is not part of Ops: Run adds it.
func Generate(seed uint64) History {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &gen{r: r, more: rand.New(rand.NewPCG(seed^0x5eed, seed))}
	h := History{Seed: seed}
	switch x := r.IntN(10); {
	case x < 6:
		h.Partitions = int32(1 + r.IntN(4))
	case x < 9:
		h.Partitions = int32(4 + r.IntN(12))
	default:
		h.Partitions = int32(16 + r.IntN(35))
	}
	g.parts = h.Partitions
	for p := int32(0); p < h.Partitions; p++ {
		if p == 0 || r.IntN(3) == 0 {
			h.Busy = append(h.Busy, p)
		}
	}
	g.busy = h.Busy
	// Some data before the first start.
	for i := r.IntN(4); i > 0; i-- {
		h.Ops = append(h.Ops, g.produce())
	}
	running := false
	steps := 8 + r.IntN(25)
	for i := 0; i < steps; i++ {
		if !running {
			switch x := r.IntN(10); {
			case x < 2:
				h.Ops = append(h.Ops, g.produce())
			case x == 2:
				h.Ops = append(h.Ops, Op{Kind: OpRetention, Part: g.part(), Frac: r.Float64()})
			case x == 3 && r.IntN(3) == 0:
				h.Ops = append(h.Ops, g.addParts())
			case x == 4 && r.IntN(2) == 0:
				h.Ops = append(h.Ops, Op{Kind: OpSet, Part: g.part(), Frac: r.Float64()})
			default:
				start := Op{Kind: OpStart, Flags: g.flags()}
				h.Ops = append(h.Ops, start)
				if start.Flags.UntilEnd || start.Flags.MaxBatches > 0 {
					continue // ends by itself
				}
				running = true
			}
			continue
		}
		switch x := r.IntN(100); {
		case x < 30:
			h.Ops = append(h.Ops, g.produce())
		case x < 40:
			h.Ops = append(h.Ops, Op{Kind: OpWait, Wait: time.Duration(20+r.IntN(300)) * time.Millisecond})
		case x < 46:
			h.Ops = append(h.Ops, g.seek())
		case x < 50:
			part := int32(-1)
			if r.IntN(2) == 0 {
				part = g.part()
			}
			h.Ops = append(h.Ops, Op{Kind: OpPause, Part: part},
				Op{Kind: OpWait, Wait: time.Duration(20+r.IntN(200)) * time.Millisecond},
				Op{Kind: OpResume, Part: part})
		case x < 56:
			h.Ops = append(h.Ops, Op{Kind: OpAck})
		case x < 61:
			h.Ops = append(h.Ops, Op{Kind: OpRetention, Part: g.part(), Frac: r.Float64()})
		case x < 64:
			h.Ops = append(h.Ops, g.addParts())
		case x < 68:
			op := Op{Kind: OpMoveLeader, Part: -1}
			if r.IntN(3) > 0 {
				op.Part, op.Node = g.part(), int32(r.IntN(3))
			}
			h.Ops = append(h.Ops, op)
		case x < 72:
			mode := "drop"
			if r.IntN(2) == 0 {
				mode = "stall"
			}
			h.Ops = append(h.Ops, Op{Kind: OpBrokerDown, Node: int32(r.IntN(3)), Mode: mode, Wait: time.Duration(100+r.IntN(700)) * time.Millisecond})
		case x < 84:
			crash := []string{CrashNow, CrashAfterPlan, CrashInProcess, CrashAtSeek}[r.IntN(4)]
			h.Ops = append(h.Ops, Op{Kind: OpCrash, Crash: crash})
			if crash == CrashAtSeek {
				h.Ops = append(h.Ops, g.seek())
			}
			running = false
		default:
			h.Ops = append(h.Ops, Op{Kind: OpStop})
			running = false
		}
	}
	if running {
		h.Ops = append(h.Ops, Op{Kind: OpStop})
	}
	h.Codec = drawCodec(seed)
	return h
}

type gen struct {
	r     *rand.Rand
	parts int32
	busy  []int32
	// more draws the details r does not: r's draws stay fixed so that the
	// seeds kept in fixedSeeds keep their operations, but for what more
	// changes (a seek of one partition may become a seek of all).
	// TestGenerate checks that those seeds' histories stay the same.
	more *rand.Rand
}

// part picks a partition that exists at generation time; one added later
// may be picked by Run when it maps Part modulo the live count.
func (g *gen) part() int32 {
	if g.r.IntN(4) > 0 {
		return g.busy[g.r.IntN(len(g.busy))]
	}
	return int32(g.r.IntN(int(g.parts)))
}

func (g *gen) produce() Op {
	op := Op{Kind: OpProduce, Part: g.part(), N: 1 + g.r.IntN(40), Size: "small"}
	switch x := g.r.IntN(40); {
	case x == 0:
		op.Size, op.N = "huge", 1
	case x < 4:
		op.Size, op.N = "large", 1+g.r.IntN(5)
	case x < 16:
		op.Size = "mixed"
	}
	if g.r.IntN(4) == 0 {
		op.N += 200 + g.r.IntN(800) // a backlog
		if op.Size != "small" {
			op.Size = "small"
		}
	}
	switch g.r.IntN(8) {
	case 0:
		op.Txn = "commit"
	case 1:
		op.Txn = "abort"
	}
	return op
}

func (g *gen) seek() Op {
	op := Op{Kind: OpSeek, Part: g.part(), Frac: g.r.Float64(), N: 1 + g.r.IntN(50)}
	op.Seek = []string{"offset", "earliest", "latest", "-N", "@time"}[g.r.IntN(5)]
	if g.more.IntN(4) == 0 {
		op.Part = -1 // every partition, as S does
	}
	return op
}

func (g *gen) addParts() Op {
	n := 1 + g.r.IntN(3)
	if g.parts+int32(n) > 60 {
		return Op{Kind: OpWait, Wait: 10 * time.Millisecond}
	}
	g.parts += int32(n)
	return Op{Kind: OpAddParts, N: n}
}

func (g *gen) flags() Flags {
	f := Flags{
		MaxPerPartition: []int{1, 3, 10, 50, 200, 10000}[g.r.IntN(6)],
		Interval:        time.Duration(20+g.r.IntN(31)) * time.Millisecond,
		Reset:           "latest",
		ManualAck:       g.r.IntN(5) == 0,
		Uncommitted:     g.r.IntN(6) == 0,
	}
	if g.r.IntN(3) == 0 {
		f.Reset = "earliest"
	}
	if g.r.IntN(5) == 0 {
		for i := 1 + g.r.IntN(2); i > 0; i-- {
			p := g.part()
			spec := []string{fmt.Sprintf("%d", g.r.IntN(30)), "earliest", "latest", fmt.Sprintf("-%d", 1+g.r.IntN(20))}[g.r.IntN(4)]
			f.Explicit = append(f.Explicit, fmt.Sprintf("%d=%s", p, spec))
		}
	}
	switch g.r.IntN(8) {
	case 0:
		f.UntilEnd = true
	case 1:
		f.MaxBatches = 1 + g.r.IntN(4)
	}
	return f
}

// Codecs are the producer codecs a history draws from.
var Codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// drawCodec draws a history's codec: none in 2 of 6, each codec in 1.
func drawCodec(seed uint64) string {
	x := rand.New(rand.NewPCG(seed^0xc0dec, seed)).IntN(len(Codecs) + 1)
	return Codecs[max(x-1, 0)]
}
