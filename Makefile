# kbatch — the Makefile is the manual. Two commands set everything up:
#   make demo    build and open kbatch on an embedded broker with live traffic
#   make test    run every test (race detector on) against in-process kfake
# Nothing is installed globally: the binary goes to ./bin, Go modules to Go's cache.

GO      ?= go
BIN     := bin/kbatch
# kbatch version prints VERSION (a v* tag; empty outside a tagged checkout,
# then the binary says "dev") and COMMIT. go install builds get both from
# debug.ReadBuildInfo instead.
VERSION ?= $(shell git describe --tags --match 'v*' --dirty 2>/dev/null)
COMMIT  ?= $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD || c=$$c+dirty; } && echo $$c)
LDFLAGS := -s -w -X github.com/kbatch-dev/kbatch/cli.version=$(VERSION) -X github.com/kbatch-dev/kbatch/cli.commit=$(COMMIT)

.PHONY: all build demo test bench bench-kafka start-pages soak fuzz lint cross screenshots docs man release-snapshot release-snapshot-one clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

demo: build
	./$(BIN) demo

test:
	$(GO) test -race -count=1 ./...

# Benchmarks (BENCHMARKS.md): the go test -bench suite, then benchrun, which
# fills topics on a kfake broker in a process of its own (BENCH_RECORDS
# records of 200 B text on 3 partitions per data set; the data-shape
# matrix of BENCH_MATRIX rows, BENCH_MATRIX_MB MiB of values each and at
# most 1M records; topics of BENCH_WIDE partitions, 1000 and 10,000), runs kbatch,
# bare sarama and franz-go loops and kcat side by side for BENCH_ROUNDS
# rounds, and prints the final table. bench-kafka runs the same rows
# against the real broker of `make kafka-up`. A quick pass:
#   make bench BENCH_RECORDS=1000000 BENCH_MATRIX_MB=20 BENCH_ROUNDS=1
BENCH_RECORDS   ?= 1000000,3000000
BENCH_ROUNDS    ?= 3
BENCH_MATRIX    ?= all
BENCH_MATRIX_MB ?= 200
BENCH_WIDE      ?= 1000,10000
BENCH_ARGS       = -records $(BENCH_RECORDS) -rounds $(BENCH_ROUNDS) -matrix $(BENCH_MATRIX) -matrix-mb $(BENCH_MATRIX_MB) -wide $(BENCH_WIDE) -kbatch $(BIN)
bench: build
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	$(GO) run ./internal/benchrun $(BENCH_ARGS)

# The soak (docs/soak.md): live traffic of 5,000 records/s of 200 B over
# 50 partitions from a kfake broker and producer in a process of their
# own, the kbatch TUI on it in a 140x40 tmux pane for SOAK_TIME; every
# 10 s the kbatch process's RSS, CPU time and goroutines (from its
# --debug-addr pprof listener) go to .cache/soak/soak.csv, and at the end
# the summary and the curves to .cache/soak/soak.md. Needs tmux.
SOAK_TIME ?= 1h
soak: build
	$(GO) run ./internal/benchrun soak -kbatch $(BIN) -duration $(SOAK_TIME) -out .cache/soak

# Where the memory of a short command goes (BENCHMARKS.md "The binary and
# its start"): kbatch built with its symbols runs START_ARGS (default
# version) and stops at its first write; the resident pages of the binary
# by section and its resident code by module. Linux only.
START_ARGS ?= version
start-pages:
	$(GO) run ./internal/startpages -- $(START_ARGS)

bench-kafka: build
	@test -s .cache/kafka/bootstrap || { echo "bench-kafka: no .cache/kafka/bootstrap; run 'make kafka-up' first" >&2; exit 1; }
	$(GO) run ./internal/benchrun -brokers $$(cat .cache/kafka/bootstrap) $(BENCH_ARGS) -gobench=false

# A short pass over every fuzz target (go test -fuzz takes one target at a time).
FUZZTIME ?= 10s
FUZZ_TARGETS := record:FuzzEscape record:FuzzSafeJSON offsets/exchange:FuzzParse cli:FuzzOneLine offsets:FuzzParseSpec offsets:FuzzShellQuote offsets/spark:FuzzParseOffsetLog offsets/spark:FuzzParseOffsetJSON offsets/spark:FuzzParseInitialOffsets offsets:FuzzPreflight config:FuzzLoadConfig replay:FuzzParseRange record:FuzzAppendJSON
fuzz:
	@FUZZTIME='$(FUZZTIME)' FUZZ_TARGETS='$(FUZZ_TARGETS)' GO='$(GO)' ./scripts/fuzz.sh

# The README's pictures: kbatch demo in tmux at 140x40 and 80x24, rendered
# with freeze (installed into .cache/bin when missing) into screenshots/.
screenshots: build
	./scripts/screenshots.sh

# docs/cli: the command reference, one markdown page per command, written
# from the command tree by internal/gendocs, which is not part of the
# binary (TestCLIReferenceIsCurrent fails when docs/cli is stale).
docs:
	rm -rf docs/cli
	$(GO) run ./internal/gendocs --markdown docs/cli

# Man pages (section 1) into man/; `man ./man/kbatch.1` reads one.
man:
	rm -rf man
	$(GO) run ./internal/gendocs --man man

# Release archives and checksums for every platform into dist/ with
# goreleaser (.goreleaser.yaml), run with go run: nothing is installed.
# The first run compiles goreleaser itself (about 5 minutes on 2 cores);
# later runs reuse Go's build cache and start in seconds.
# release-snapshot-one builds the archive of one platform only
# (RELEASE_TARGET=os/arch, default this machine's), from a copy of the
# config with the target lists narrowed: goreleaser's release command has
# no --single-target.
GORELEASER     ?= $(GO) run github.com/goreleaser/goreleaser/v2@v2.15.1
RELEASE_TARGET ?= $(shell $(GO) env GOOS)/$(shell $(GO) env GOARCH)
release-snapshot:
	$(GORELEASER) release --snapshot --clean

release-snapshot-one:
	@mkdir -p .cache
	sed -e 's|^    goos: \[.*\]$$|    goos: [$(word 1,$(subst /, ,$(RELEASE_TARGET)))]|' \
	    -e 's|^    goarch: \[.*\]$$|    goarch: [$(word 2,$(subst /, ,$(RELEASE_TARGET)))]|' \
	    .goreleaser.yaml > .cache/goreleaser-one.yaml
	@grep -q '^    goos: \[$(word 1,$(subst /, ,$(RELEASE_TARGET)))\]$$' .cache/goreleaser-one.yaml && \
	 grep -q '^    goarch: \[$(word 2,$(subst /, ,$(RELEASE_TARGET)))\]$$' .cache/goreleaser-one.yaml || \
	 { echo "release-snapshot-one: could not narrow .goreleaser.yaml's goos/goarch lines" >&2; exit 1; }
	$(GORELEASER) release --snapshot --clean -f .cache/goreleaser-one.yaml

# cross builds kbatch for every platform .goreleaser.yaml releases (its
# goos and goarch lines), so code that compiles only here is caught
# before a release. CROSS_ARCH narrows the architectures (.ci/run: amd64
# only, every system; cold, all six take about 10 minutes here).
CROSS_ARCH ?=
cross:
	@oses=$$(sed -n 's/^    goos: \[\(.*\)\]$$/\1/p' .goreleaser.yaml | tr ',' ' '); \
	arches=$${CROSS_ARCH:-$$(sed -n 's/^    goarch: \[\(.*\)\]$$/\1/p' .goreleaser.yaml | tr ',' ' ')}; \
	[ -n "$$oses" ] && [ -n "$$arches" ] || { echo "cross: no goos/goarch lines in .goreleaser.yaml" >&2; exit 1; }; \
	for os in $$oses; do for arch in $$arches; do \
	  echo "build $$os/$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -o /dev/null . || exit 1; \
	done; done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff

clean:
	rm -rf bin dist man

include scripts/kafka.mk

# A real schema registry for the schema/ package (Apicurio Registry from Maven Central,
# Java 21+, in-memory storage, no Docker; scripts/registry-up.sh says how):
#   make registry-up     start or reuse it; prints the URL for --registry (also .cache/registry/url)
#   make registry-down   stop it
#   make test-registry   write Avro, Protobuf and JSON Schema records with Confluent's own
#                        Python serializers (a virtualenv in .cache/pyenv) through it to the
#                        broker of `make kafka-up`, then decode them with schema/
.PHONY: registry-up registry-down test-registry
FUZZ_TARGETS += schema:FuzzDecode schema:FuzzJSONSchema schema:FuzzAvroDecodeAgreesWithHamba schema/avro:FuzzParse
FUZZ_TARGETS += kafka:FuzzDecodeRecords kafka:FuzzDecodeSealedBatch kafka:FuzzLZ4Frame
FUZZ_TARGETS += tui:FuzzFieldText
FUZZ_TARGETS += filter:FuzzParseJSON filter:FuzzPlainLen

registry-up:
	@./scripts/registry-up.sh

registry-down:
	@./scripts/registry-down.sh

test-registry:
	@test -s .cache/registry/url || { echo "test-registry: no .cache/registry/url; run 'make registry-up' first" >&2; exit 1; }
	@test -s $(KAFKA_BOOTSTRAP_FILE) || { echo "test-registry: no $(KAFKA_BOOTSTRAP_FILE); run 'make kafka-up' first" >&2; exit 1; }
	./scripts/schema-records.sh
	KBATCH_TEST_REGISTRY=$$(cat .cache/registry/url) \
	KBATCH_TEST_SCHEMA_RECORDS=$(CURDIR)/.cache/registry/records.jsonl \
	KBATCH_TEST_BROKERS=$$(cat $(KAFKA_BOOTSTRAP_FILE)) \
	$(GO) test -race -count=1 -run '^TestRealRegistry' -v ./schema/

# Authentication against real servers, no Docker (scripts/auth-up.sh says what runs, all under
# .cache/auth; docs/auth-*.md): Kafka with a listener per mechanism (SCRAM, mTLS, OAUTHBEARER
# with the unsecured and the OIDC validator, GSSAPI), an MIT KDC (Debian's krb5-kdc; GSSAPI is
# left out when it is not installed) and an OIDC provider (internal/authlab).
#   make test-auth        start the lab, run every TestRealAuth* test, stop it (about 3 minutes)
#   make test-auth-smoke  the same without the two 30 s token-renewal watches
#   make auth-up / auth-down   start or stop the lab by hand (.cache/auth/env says where it is)
.PHONY: test-auth test-auth-smoke auth-up auth-down

test-auth:
	@./scripts/auth-test.sh full

test-auth-smoke:
	@./scripts/auth-test.sh smoke

auth-up:
	@./scripts/auth-up.sh

auth-down:
	@./scripts/auth-down.sh

# The randomized simulation of the stream (internal/sim, docs/design.md §7): random
# seeded histories of produce, crash, restart with changed flags, seek,
# pause, ack, retention, new partitions, leader moves and broker outages on
# a 3-broker kfake cluster, every invariant checked after each one, for
# SIM_TIME. It prints how many histories ran; a failure prints its seed and
# operations, and KBATCH_SIM_SEED=N go test ./internal/sim -run 'TestSim$$'
# replays it. It first replays the seeds of the known bugs. `make test` runs a
# fixed set of seeds and the known bugs as named histories.
SIM_TIME ?= 5m
.PHONY: sim
sim:
	KBATCH_SIM_BUG_SEEDS=1 $(GO) test -count=1 -timeout 0 -run 'TestKnownBug' ./internal/sim
	SIM_TIME=$(SIM_TIME) $(GO) test -count=1 -timeout 0 -run 'TestSim$$' -v ./internal/sim

# Spark for real (docs/spark.md): PySpark 4.2.0 in a virtualenv under .cache/sparkenv, Java 17,
# the broker of `make kafka-up`.
#   make test-spark       a Structured Streaming query while a producer writes: kbatch spark live
#                         beside it, watch --from-spark, offsets show --format spark and the e export
#                         in Spark batch queries, the job of replay --emit spark
#                         and then the object-store suite on the checkpoint the query wrote
#   make test-objstore    moto (S3), fake-gcs-server (GCS) and Azurite (Azure Blob) on free ports,
#                         each installed under .cache/ on first use: a Spark checkpoint copied into
#                         each reads as from disk, also while it grows; servers stopped at the end
#   make objstore-up / objstore-down   start or stop those servers by hand (.cache/objstore/env
#                         holds the variables each SDK's default chain reads to reach them)
#   make spark-fixtures   rewrite testdata/spark-real's checkpoints of several topics, a
#                         subscribePattern query and a topic that grew, from real Spark queries
.PHONY: test-spark test-objstore objstore-up objstore-down spark-fixtures
test-spark:
	@./scripts/spark-test.sh

spark-fixtures:
	@./scripts/spark-test.sh fixtures

test-objstore:
	@./scripts/objstore-test.sh

objstore-up:
	@./scripts/objstore-up.sh

objstore-down:
	@./scripts/objstore-down.sh
