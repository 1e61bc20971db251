# Real Apache Kafka (KRaft, single node, no Docker) for integration tests.
# Include from the top-level Makefile:   include scripts/kafka.mk
#   make kafka-up        start or reuse the broker; prints host:port (also in .cache/kafka/bootstrap)
#   make test-kafka      go test -race against it (KBATCH_TEST_BROKERS=host:port), then the
#                        broker-restart fault test alone ($KBATCH_TEST_KAFKA_RESTART restarts it)
#   make kafka-restart   SIGKILL + restart on the same ports and data (fault tests)
#   make kafka-down      stop it and remove its data
# KAFKA_VERSION picks any org.apache.kafka:kafka_2.13 4.x release on Maven Central.

KAFKA_VERSION ?= 4.4.0
KAFKA_SCRIPTS := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
KAFKA_BOOTSTRAP_FILE := $(dir $(KAFKA_SCRIPTS)).cache/kafka/bootstrap

.PHONY: kafka-up kafka-down kafka-restart test-kafka

kafka-up:
	@KAFKA_VERSION=$(KAFKA_VERSION) $(KAFKA_SCRIPTS)/kafka-up.sh

kafka-down:
	@$(KAFKA_SCRIPTS)/kafka-down.sh

kafka-restart:
	@$(KAFKA_SCRIPTS)/kafka-restart.sh

test-kafka:
	@test -s $(KAFKA_BOOTSTRAP_FILE) || { echo "test-kafka: no $(KAFKA_BOOTSTRAP_FILE); run 'make kafka-up' first" >&2; exit 1; }
	@# The broker-restart fault test runs first and alone: it takes the broker
	@# down, which would fail whatever other package is testing against it at
	@# that moment, and a broker with few partitions restarts fast.
	KBATCH_TEST_BROKERS=$$(cat $(KAFKA_BOOTSTRAP_FILE)) \
	KBATCH_TEST_KAFKA_RESTART=$(abspath $(KAFKA_SCRIPTS))/kafka-restart.sh \
	go test -race -count=1 -run '^TestBrokerRestartMidStream$$' -v .
	KBATCH_TEST_BROKERS=$$(cat $(KAFKA_BOOTSTRAP_FILE)) go test -race -count=1 ./...
