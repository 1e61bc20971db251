# kbatch — the Makefile is the manual. Two commands set everything up:
#   make demo    build and open kbatch on an embedded broker with live traffic
#   make test    run every test (race detector on) against in-process kfake
# Nothing is installed globally: the binary goes to ./bin, Go modules to Go's cache.

GO      ?= go
BIN     := bin/kbatch
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build demo test bench fuzz lint screenshots clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

demo: build
	./$(BIN) demo

test:
	$(GO) test -race -count=1 ./...

# Benchmarks: the go test -bench suite, then kbatch side by side with bare
# clients on the same data in the same run (BENCH_RECORDS records of 200 B on
# 3 partitions of an in-process kfake, or KBATCH_TEST_BROKERS when set).
BENCH_RECORDS ?= 1000000
bench: build
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	$(GO) run ./internal/benchrun -records $(BENCH_RECORDS) -kbatch $(BIN)

# A short pass over every fuzz target (go test -fuzz takes one target at a time).
FUZZTIME ?= 10s
FUZZ_TARGETS := offsets:FuzzParseSpec consumer:FuzzAppendRecordJSON offsets/spark:FuzzParseOffsetLog
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "fuzz $${t#*:} ($(FUZZTIME))"; \
	  $(GO) test -run='^$$' -fuzz="^$${t#*:}$$" -fuzztime=$(FUZZTIME) ./$${t%%:*}/; \
	done

# The README's pictures: kbatch demo in tmux at 140x40 and 80x24, rendered
# with freeze (installed into .cache/bin when missing) into screenshots/.
screenshots: build
	./scripts/screenshots.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff

clean:
	rm -rf bin

include scripts/kafka.mk
