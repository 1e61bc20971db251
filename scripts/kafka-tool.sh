#!/usr/bin/env bash
# Run a Kafka CLI class with the cached jars and quiet logging, e.g.
#   scripts/kafka-tool.sh org.apache.kafka.tools.TopicCommand --bootstrap-server "$(cat .cache/kafka/bootstrap)" --list
# Uses the version of the running broker (else KAFKA_VERSION); resolves jars if needed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka-lib.sh"
[ $# -gt 0 ] || kdie "usage: kafka-tool.sh CLASS [ARGS...]"
version=$( (k_alive && cat "$K_VERFILE") 2>/dev/null || echo "$KAFKA_VERSION")
k_init
libs=$(k_libs "$version")
[ -s "$K_LOG4J_TOOLS" ] || k_write_log4j
exec 9>&-
k_tool "$libs" "$@"
