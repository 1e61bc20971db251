# Real Apache Kafka (single node, no Docker) for integration tests.
# Include from the top-level Makefile:   include scripts/kafka.mk
#   make kafka-up        start or reuse the broker; prints host:port (also in .cache/kafka/bootstrap)
#   make test-kafka      go test -race against it (KBATCH_TEST_BROKERS=host:port), then the
#                        broker-restart fault test alone ($KBATCH_TEST_KAFKA_RESTART restarts it)
#   make kafka-restart   SIGKILL + restart on the same ports and data (fault tests)
#   make kafka-down      stop it and remove its data
#   make test-kafka-smoke  the smoke subset of test-kafka (stream, replay with transactions,
#                        data loss, kbatch killed, broker killed): what CI runs on older releases
#   make test-matrix     kafka-up + test-kafka on every release of KAFKA_MATRIX in turn
#   make test-matrix-smoke  the same with test-kafka-smoke
#   make test-codecs     Java and librdkafka producers x every codec (+ v0/v1 formats on 2.x):
#                        kbatch replay and watch read what kcat and the Java consumer read
#   make kafka3-up / kafka3-down / test-kafka3   a 3-broker KRaft cluster and its fault suite
#   make test-kafka3-smoke  the same without the slow faults (reassignment, rolling restart),
#                        with a 15 s broker outage and 3 kbatch kills: what CI runs
# KAFKA_VERSION picks an org.apache.kafka:kafka_2.13 release on Maven Central: 2.x runs with
# ZooKeeper (2.8.2 is tested), 3.3+ in KRaft mode (3.6.2, 3.9.1, 4.x are tested).

KAFKA_VERSION ?= 4.4.0
KAFKA_SCRIPTS := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
KAFKA_BOOTSTRAP_FILE := $(dir $(KAFKA_SCRIPTS)).cache/kafka/bootstrap

.PHONY: kafka-up kafka-down kafka-restart test-kafka test-kafka-smoke test-matrix test-matrix-smoke \
	test-codecs kafka3-up kafka3-down test-kafka3 test-kafka3-smoke

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
	@# It must have run and passed: a test moved or renamed fails here.
	@log=$$(mktemp); \
	KBATCH_TEST_BROKERS=$$(cat $(KAFKA_BOOTSTRAP_FILE)) \
	KBATCH_TEST_KAFKA_RESTART=$(abspath $(KAFKA_SCRIPTS))/kafka-restart.sh \
	go test -race -count=1 -run '^TestBrokerRestartMidStream$$' -v ./cli/ >$$log 2>&1; rc=$$?; cat $$log; \
	grep -q '^--- PASS: TestBrokerRestartMidStream ' $$log || { echo "test-kafka: TestBrokerRestartMidStream did not run and pass" >&2; rc=1; }; \
	rm -f $$log; exit $$rc
	KBATCH_TEST_BROKERS=$$(cat $(KAFKA_BOOTSTRAP_FILE)) go test -race -count=1 ./...

test-kafka-smoke:
	@test -s $(KAFKA_BOOTSTRAP_FILE) || { echo "test-kafka-smoke: no $(KAFKA_BOOTSTRAP_FILE); run 'make kafka-up' first" >&2; exit 1; }
	@$(KAFKA_SCRIPTS)/kafka-smoke.sh

# Releases of the matrix: the last 2.x (ZooKeeper), a 3.x with a static KRaft quorum, the
# last 3.x, and the newest.
KAFKA_MATRIX ?= 2.8.2 3.6.2 3.9.1 4.4.0

test-matrix: build
	@$(KAFKA_SCRIPTS)/kafka-matrix.sh full $(KAFKA_MATRIX)

test-matrix-smoke: build
	@$(KAFKA_SCRIPTS)/kafka-matrix.sh smoke $(KAFKA_MATRIX)

# Every codec, every producer, against the broker of kafka-up (CODEC_RECORDS per case).
test-codecs: build
	@$(KAFKA_SCRIPTS)/kafka-codecs.sh

# Three brokers on localhost (KRaft; KAFKA_VERSION 3.3 or later) and the fault suite on them:
# reassignment, preferred leader election, rolling restart, a broker SIGKILLed for 30 s.
kafka3-up:
	@KAFKA_VERSION=$(KAFKA_VERSION) $(KAFKA_SCRIPTS)/kafka3-up.sh

kafka3-down:
	@$(KAFKA_SCRIPTS)/kafka3-down.sh

test-kafka3: build
	@KAFKA_VERSION=$(KAFKA_VERSION) $(KAFKA_SCRIPTS)/kafka3-up.sh >/dev/null
	@$(KAFKA_SCRIPTS)/kafka3-faults.sh
	@$(KAFKA_SCRIPTS)/kafka3-unclean.sh
	@$(KAFKA_SCRIPTS)/kafka3-rack.sh

test-kafka3-smoke: build
	@KAFKA_VERSION=$(KAFKA_VERSION) $(KAFKA_SCRIPTS)/kafka3-up.sh >/dev/null
	@FAULTS_SMOKE=1 FAULTS_DOWN=15 FAULTS_KBATCH_KILLS=2 $(KAFKA_SCRIPTS)/kafka3-faults.sh
	@$(KAFKA_SCRIPTS)/kafka3-unclean.sh
	@$(KAFKA_SCRIPTS)/kafka3-rack.sh
