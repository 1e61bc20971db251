"""Spark jobs for kbatch's real-Spark suite (make test-spark; cli/spark_real_test.go).

  stream  a Structured Streaming query over Kafka (trigger every 2 s) whose
          foreachBatch sink writes each micro-batch's records to OUT/batch-N.jsonl;
          it runs until STOPFILE appears, then processes what is available and stops.
  queries several streaming queries in one session, each to its own checkpoint
          and OUT/NAME/batch-N.jsonl (the real-Spark fixtures of testdata/spark-real).
  read    Spark batch queries, one per job of a JSON file
          ([{"name": ..., "options": {...}}]), each written to OUT/NAME.jsonl.

Records are written as JSON lines {"topic","partition","offset","key_b64","value_b64"}
(null key or value: null), sorted by topic, partition, offset.
"""
import argparse
import base64
import json
import os
import sys
import time


CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"


def jar_options(cache):
    """The Kafka connector: the jars Ivy fetched into CACHE/ivy/jars on the first run, else
    spark.jars.packages (Ivy then fetches them). Later runs skip Ivy: its resolution asks
    every repository again, and one that does not answer costs minutes."""
    jars = os.path.join(cache, "ivy", "jars")
    found = sorted(os.path.join(jars, f) for f in os.listdir(jars)) if os.path.isdir(jars) else []
    if any("spark-sql-kafka-0-10_2.13-4.2.0" in f for f in found):
        return {"spark.jars": ",".join(found)}
    return {"spark.jars.packages": CONNECTOR, "spark.jars.ivy": os.path.join(cache, "ivy")}


def session(name):
    from pyspark.sql import SparkSession

    b = SparkSession.builder.appName(name).master("local[2]")
    for k, v in jar_options(os.environ["KBATCH_SPARK_CACHE"]).items():
        b = b.config(k, v)
    return (
        b.config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "512m")
        .getOrCreate()
    )


def b64(b):
    return None if b is None else base64.b64encode(bytes(b)).decode("ascii")


def write_records(rows, path):
    rows = sorted(rows, key=lambda r: (r["topic"], r["partition"], r["offset"]))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps({"topic": r["topic"], "partition": r["partition"], "offset": r["offset"],
                                "key_b64": b64(r["key"]), "value_b64": b64(r["value"])}) + "\n")
    os.replace(tmp, path)


def stream(a):
    spark = session("kbatch-stream")
    spark.sparkContext.setLogLevel("WARN")
    reader = spark.readStream.format("kafka").option("kafka.bootstrap.servers", a.bootstrap)
    if a.pattern:
        reader = reader.option("subscribePattern", a.pattern)
    else:
        reader = reader.option("subscribe", a.topics)
    reader = reader.option("startingOffsets", "earliest")
    if a.max_offsets:
        reader = reader.option("maxOffsetsPerTrigger", str(a.max_offsets))
    df = reader.load().select("topic", "partition", "offset", "key", "value")
    os.makedirs(a.out, exist_ok=True)

    def sink(batch, batch_id):
        write_records([r.asDict() for r in batch.collect()], os.path.join(a.out, "batch-%d.jsonl" % batch_id))

    q = (df.writeStream.foreachBatch(sink).option("checkpointLocation", a.checkpoint)
         .trigger(processingTime="2 seconds").start())
    print("stream: started", flush=True)
    while not os.path.exists(a.stopfile):
        if q.exception() is not None:
            print("stream: failed: %s" % q.exception(), file=sys.stderr, flush=True)
            sys.exit(1)
        time.sleep(0.5)
    q.processAllAvailable()
    q.stop()
    spark.stop()
    print("stream: stopped", flush=True)


def queries(a):
    """Several streaming queries in one session (one JVM), each from a JSON job
    {"name", "options", "checkpoint"}: Kafka source options on top of the
    bootstrap and startingOffsets earliest; foreachBatch writes each batch to
    OUT/NAME/batch-N.jsonl. All run until STOPFILE appears, then process what
    is available and stop."""
    with open(a.jobs) as f:
        jobs = json.load(f)
    spark = session("kbatch-queries")
    spark.sparkContext.setLogLevel("WARN")
    running = []
    for job in jobs:
        reader = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", a.bootstrap)
                  .option("startingOffsets", "earliest"))
        for k, v in job["options"].items():
            reader = reader.option(k, v)
        df = reader.load().select("topic", "partition", "offset", "key", "value")
        out = os.path.join(a.out, job["name"])
        os.makedirs(out, exist_ok=True)

        def sink(batch, batch_id, out=out):
            write_records([r.asDict() for r in batch.collect()], os.path.join(out, "batch-%d.jsonl" % batch_id))

        q = (df.writeStream.foreachBatch(sink).option("checkpointLocation", job["checkpoint"])
             .trigger(processingTime="2 seconds").queryName(job["name"]).start())
        running.append(q)
    print("queries: started %d" % len(running), flush=True)
    while not os.path.exists(a.stopfile):
        for q in running:
            if q.exception() is not None:
                print("queries: %s failed: %s" % (q.name, q.exception()), file=sys.stderr, flush=True)
                sys.exit(1)
        time.sleep(0.5)
    for q in running:
        q.processAllAvailable()
        q.stop()
    spark.stop()
    print("queries: stopped", flush=True)


def read(a):
    with open(a.jobs) as f:
        jobs = json.load(f)
    spark = session("kbatch-read")
    spark.sparkContext.setLogLevel("WARN")
    os.makedirs(a.out, exist_ok=True)
    for job in jobs:
        df = spark.read.format("kafka").option("kafka.bootstrap.servers", a.bootstrap)
        for k, v in job["options"].items():
            df = df.option(k, v)
        rows = [r.asDict() for r in df.load().select("topic", "partition", "offset", "key", "value").collect()]
        write_records(rows, os.path.join(a.out, job["name"] + ".jsonl"))
        print("read: %s: %d records" % (job["name"], len(rows)), flush=True)
    spark.stop()


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stream")
    s.add_argument("--bootstrap", required=True)
    s.add_argument("--topics", default="")
    s.add_argument("--pattern", default="")
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--stopfile", required=True)
    s.add_argument("--max-offsets", type=int, default=0)
    m = sub.add_parser("queries")
    m.add_argument("--bootstrap", required=True)
    m.add_argument("--jobs", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--stopfile", required=True)
    r = sub.add_parser("read")
    r.add_argument("--bootstrap", required=True)
    r.add_argument("--jobs", required=True)
    r.add_argument("--out", required=True)
    j = sub.add_parser("submit-args", help="print PYSPARK_SUBMIT_ARGS that put the connector on the classpath")
    j.add_argument("--cache", required=True)
    a = p.parse_args()
    if a.cmd == "submit-args":
        opts = jar_options(a.cache)
        if "spark.jars" in opts:
            print("--jars " + opts["spark.jars"])
        else:
            print("--packages %s --conf spark.jars.ivy=%s" % (CONNECTOR, opts["spark.jars.ivy"]))
        return
    {"stream": stream, "queries": queries, "read": read}[a.cmd](a)


if __name__ == "__main__":
    main()
