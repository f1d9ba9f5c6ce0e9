#!/usr/bin/env python3
"""Kafka Connect's Iceberg sink writing into Tablebay, end to end (issue 5, docs/clients/kafka-connect.md).

Runs, all on 127.0.0.1 with free ports and a temporary directory:
  - `tablebay serve` (TABLEBAY_BIN, else $CARGO_TARGET_DIR/debug/tablebay),
  - a Kafka 3.9 broker in KRaft mode (storage formatted with kafka.tools.StorageTool, then kafka.Kafka),
  - a distributed-mode Connect worker with plugin.path = lib/plugins (the Iceberg sink 1.10.1 and the
    guide's jars), its configs and offsets in Kafka,
and drives them: AWS CLI for the table bucket, namespace and table; the Connect REST API for the connectors,
configured with the OSS Tables guide's properties and Tablebay's endpoints; ProduceEvents (lib/kafka) for the
JSON events; PyIceberg to read the table back.

Steps: 10,000 events exactly once; kill -9 of the worker mid-stream, restart, more events, still exactly once;
the sink's auto-create and schema evolution (two tables per commit); a wrong secret key rejected with the
catalog's 403. One line per step, then "N passed, M failed"; exit 1 on failure.

    scenario.py [--events N] [--keep]     (lib/ must be built: scripts/jvm-kafka-connect.sh does both)
"""

from __future__ import annotations

import argparse
import base64
import collections
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO / "clients" / "python"))

from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY  # noqa: E402
from tablebay_test.cli import AwsCli  # noqa: E402
from tablebay_test.iceberg import rest_catalog  # noqa: E402
from tablebay_test.server import TablebayServer  # noqa: E402

LIB = HERE / "lib"
KAFKA_CP = str(LIB / "kafka" / "*")
CONNECTOR_CLASS = "org.apache.iceberg.connect.IcebergSinkConnector"
# Short enough for a test; the guide leaves the sink's default (300 s).
COMMIT_INTERVAL_MS = 2000
TASKS = 2
PARTITIONS = 2
AUTO_TOPIC = "events-auto"
CONTROL_TOPIC = "control-iceberg"  # the sink's default iceberg.control.topic


class StepFailed(AssertionError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, timeout: float, interval: float = 0.5):
    """Calls `check()` until it returns something truthy; fails with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            result = check()
            if result:
                return result
        except Exception as exc:  # noqa: BLE001 (shown if the wait times out)
            last_error = exc
        if time.monotonic() > deadline:
            raise StepFailed(f"timed out after {timeout:.0f}s waiting for {what}"
                             + (f" (last error: {last_error!r})" if last_error else ""))
        time.sleep(interval)


def log_tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return f"(no {path.name})"
    return f"--- {path} (last {lines} lines) ---\n" + "\n".join(text[-lines:])


LOG4J = """\
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File={path}
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.org.apache.kafka.common.utils.AppInfoParser=WARN
log4j.logger.org.apache.iceberg=INFO
"""


class JavaProcess:
    """A JVM child in its own process group, stdout/stderr to `<name>.out` in the work dir."""

    def __init__(self, workdir: Path, name: str, main: str, args: list[str], heap: str):
        self.workdir, self.name, self.main, self.args, self.heap = workdir, name, main, args, heap
        self.out = workdir / f"{name}.out"
        self.log = workdir / f"{name}.log"
        (workdir / f"{name}-log4j.properties").write_text(LOG4J.format(path=self.log))
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        cmd = ["java", f"-Xmx{self.heap}", "-XX:+UseSerialGC", "-Djava.awt.headless=true",
               f"-Dlog4j.configuration=file:{self.workdir / (self.name + '-log4j.properties')}",
               "-cp", KAFKA_CP, self.main, *self.args]
        with open(self.out, "a") as out:
            out.write(f"$ {' '.join(cmd)}\n")
            out.flush()
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         cwd=self.workdir, start_new_session=True)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill9()

    def diagnostics(self) -> str:
        return log_tail(self.out, 20) + "\n" + log_tail(self.log)


class Broker(JavaProcess):
    """One combined broker+controller in KRaft mode."""

    def __init__(self, workdir: Path):
        self.port, self.controller_port = free_port(), free_port()
        props = workdir / "server.properties"
        props.write_text("\n".join([
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@127.0.0.1:{self.controller_port}",
            f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names=CONTROLLER",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            f"log.dirs={workdir / 'kafka-data'}",
            f"num.partitions={PARTITIONS}",
            # One broker: every internal topic has one replica (the sink commits with transactions).
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            "",
        ]))
        super().__init__(workdir, "kafka", "kafka.Kafka", [str(props)], "512m")
        self.props = props
        self.bootstrap = f"127.0.0.1:{self.port}"

    def format_storage(self) -> None:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        cmd = ["java", "-Xmx256m", "-cp", KAFKA_CP, "kafka.tools.StorageTool", "format",
               "-t", cluster_id, "-c", str(self.props)]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            raise StepFailed(f"StorageTool format exited {run.returncode}: {run.stdout}{run.stderr}")

    def wait_ready(self) -> None:
        def ready():
            if not self.alive():
                raise StepFailed(f"the broker exited\n{self.diagnostics()}")
            return "started (kafka.server.KafkaRaftServer)" in self.log.read_text(errors="replace") \
                if self.log.exists() else False
        wait_for("the Kafka broker", ready, 120)


class ConnectWorker(JavaProcess):
    """A distributed-mode worker: group, configs, offsets and status live in Kafka topics."""

    def __init__(self, workdir: Path, bootstrap: str):
        self.port = free_port()
        props = workdir / "connect-distributed.properties"
        props.write_text("\n".join([
            f"bootstrap.servers={bootstrap}",
            "group.id=tablebay-connect",
            f"listeners=http://127.0.0.1:{self.port}",
            "rest.advertised.host.name=127.0.0.1",
            f"rest.advertised.port={self.port}",
            "config.storage.topic=connect-configs",
            "offset.storage.topic=connect-offsets",
            "status.storage.topic=connect-status",
            "config.storage.replication.factor=1",
            "offset.storage.replication.factor=1",
            "status.storage.replication.factor=1",
            "key.converter=org.apache.kafka.connect.json.JsonConverter",
            "value.converter=org.apache.kafka.connect.json.JsonConverter",
            f"plugin.path={LIB / 'plugins'}",
            # A worker that comes back after kill -9 gets the tasks at once, not after the default 5 min.
            "scheduled.rebalance.max.delay.ms=0",
            # An idle sink task waits in its consumer's poll until the next offset flush (default 60 s), and
            # the Iceberg sink reads its control topic only between polls: the tail of a burst would wait up
            # to 60 s for its commit. 5 s keeps the scenario short; the tables see the same requests.
            "offset.flush.interval.ms=5000",
            "",
        ]))
        super().__init__(workdir, "connect", "org.apache.kafka.connect.cli.ConnectDistributed", [str(props)],
                         "1g")
        self.url = f"http://127.0.0.1:{self.port}"
        self.connectors: dict[str, dict] = {}  # name → the config it was given

    def rest(self, method: str, path: str, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                return err.code, json.loads(raw)
            except ValueError:
                return err.code, raw.decode(errors="replace")

    def wait_ready(self) -> None:
        def ready():
            if not self.alive():
                raise StepFailed(f"the Connect worker exited\n{self.diagnostics()}")
            status, plugins = self.rest("GET", "/connector-plugins")
            return status == 200 and any(p.get("class") == CONNECTOR_CLASS for p in plugins)
        wait_for("the Connect worker's REST API to list the Iceberg sink", ready, 180, 1.0)

    def put_connector(self, name: str, config: dict) -> None:
        status, body = self.rest("PUT", f"/connectors/{name}/config", config)
        if status not in (200, 201):
            raise StepFailed(f"PUT /connectors/{name}/config → {status}: {body}")
        self.connectors[name] = config

    def wait_running(self, name: str) -> None:
        def running():
            status, body = self.rest("GET", f"/connectors/{name}/status")
            if status != 200:
                return False
            states = [body["connector"]["state"]] + [t["state"] for t in body.get("tasks", [])]
            if "FAILED" in states:
                traces = [t.get("trace", "") for t in [body["connector"], *body.get("tasks", [])]]
                raise StepFailed(f"connector {name} FAILED: " + "\n".join(filter(None, traces))[:4000])
            return len(body.get("tasks", [])) == int(self.connectors[name]["tasks.max"]) and \
                all(s == "RUNNING" for s in states)
        wait_for(f"connector {name} and its tasks to be RUNNING", running, 120, 1.0)


def run_tool(workdir: Path, main: str, *args: str) -> None:
    """Runs one of the scenario's own Java mains (lib/kafka/tablebay-kafka-produce.jar) to completion."""
    cmd = ["java", "-Xmx256m", "-XX:+UseSerialGC", "-cp", KAFKA_CP,
           f"-Dlog4j.configuration=file:{workdir / 'kafka-log4j.properties'}", f"dev.tablebay.kafka.{main}", *args]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise StepFailed(f"{main} exited {run.returncode}: {run.stdout}{run.stderr}")


def produce(broker: Broker, workdir: Path, topic: str, prefix: str, first: int, count: int,
            extra_field: str | None = None) -> None:
    run_tool(workdir, "ProduceEvents", broker.bootstrap, topic, prefix, str(first), str(count),
             *([extra_field] if extra_field else []))


def expected_ids(prefix: str, first: int, count: int) -> set[str]:
    return {f"{prefix}-{i}" for i in range(first, first + count)}


class Scenario:
    def __init__(self, workdir: Path, events: int):
        self.workdir = workdir
        self.events = events
        self.passed = 0
        self.failed = 0
        # The default ARN flavor: the warehouse is an `acs:osstables:…` ARN, as in the OSS Tables guide.
        self.server = TablebayServer(workdir / "tablebay", arn_flavor=None)
        self.broker: Broker | None = None
        self.worker: ConnectWorker | None = None
        self.cli: AwsCli | None = None
        self.bucket_arn = ""
        self.namespace = "kafka_events"
        self.table = "events"
        self.topic = "events"
        self.ids: set[str] = set()
        self.figures: list[str] = []

    # --- plumbing ---

    def step(self, name: str, fn) -> None:
        start = time.monotonic()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 (every failure is reported, then the run stops)
            self.failed += 1
            detail = str(exc) if isinstance(exc, StepFailed) else traceback.format_exc()
            print(f"FAIL {name} ({time.monotonic() - start:.1f}s): {detail}", flush=True)
            raise
        self.passed += 1
        print(f"PASS {name} ({time.monotonic() - start:.1f}s)", flush=True)

    def catalog(self):
        return rest_catalog(self.server, self.bucket_arn)

    def connector_config(self, name: str, topic: str, tables: str, **extra: str) -> dict:
        """The OSS Tables guide's properties with Tablebay's endpoints, plus what every connector needs."""
        config = {
            "connector.class": CONNECTOR_CLASS,
            "name": name,
            "topics": topic,
            "tasks.max": str(TASKS),
            "iceberg.tables": tables,
            "iceberg.control.commit.interval-ms": str(COMMIT_INTERVAL_MS),
            # --- the guide's list, verbatim but for the endpoint, ARN, region and keys ---
            "iceberg.catalog.type": "rest",
            "iceberg.catalog.uri": f"{self.server.tables_url}/iceberg",
            "iceberg.catalog.rest.sigv4-enabled": "true",
            "iceberg.catalog.rest.signing-region": REGION,
            "iceberg.catalog.warehouse": self.bucket_arn,
            "iceberg.catalog.rest.signing-name": "osstables",
            "iceberg.catalog.rest.access-key-id": ACCESS_KEY_ID,
            "iceberg.catalog.rest.secret-access-key": SECRET_ACCESS_KEY,
            "iceberg.catalog.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
            "iceberg.catalog.s3.endpoint": self.server.s3_url,
            "iceberg.catalog.s3.access-key-id": ACCESS_KEY_ID,
            "iceberg.catalog.s3.secret-access-key": SECRET_ACCESS_KEY,
            "iceberg.catalog.s3.path-style-access": "true",
            "iceberg.catalog.client.region": REGION,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "false",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
        }
        config.update(extra)
        return config

    def rows(self, table: str, columns: tuple[str, ...] = ("event_id",)):
        tbl = self.catalog().load_table(f"{self.namespace}.{table}")
        return tbl, tbl.scan(selected_fields=columns).to_arrow()

    def wait_exactly_once(self, table: str, want: set[str], timeout: float = 240) -> int:
        """Waits until every id in `want` is in `table`, then checks the table holds each exactly once and
        nothing else. Returns the number of snapshots."""
        seen: dict[str, int] = {}

        def complete():
            _, arrow = self.rows(table)
            seen.clear()
            seen.update(collections.Counter(arrow.column("event_id").to_pylist()))
            return want.issubset(seen.keys())

        try:
            wait_for(f"{len(want)} events in {self.namespace}.{table}", complete, timeout, 1.0)
        except StepFailed as exc:
            missing = len(want - seen.keys())
            raise StepFailed(f"{exc}; {missing} of {len(want)} still missing, {sum(seen.values())} rows\n"
                             f"{self.worker.diagnostics() if self.worker else ''}") from None
        duplicates = {k: n for k, n in seen.items() if n > 1}
        extra = seen.keys() - want
        if duplicates or extra:
            raise StepFailed(f"{len(duplicates)} duplicated ids (e.g. {list(duplicates.items())[:5]}), "
                             f"{len(extra)} unexpected ids (e.g. {sorted(extra)[:5]})")
        tbl, _ = self.rows(table)
        return len(tbl.snapshots())

    # --- steps ---

    def start_services(self) -> None:
        self.server.start()
        self.cli = AwsCli(self.server.tables_url, self.workdir / "aws-home")
        self.broker = Broker(self.workdir)
        self.broker.format_storage()
        self.broker.start()
        self.broker.wait_ready()
        # Topics exist before the connectors subscribe (a consumer would see a later one only at its next
        # metadata refresh, minutes on); the sink's control topic too.
        run_tool(self.workdir, "CreateTopics", self.broker.bootstrap, str(PARTITIONS), self.topic, AUTO_TOPIC)
        run_tool(self.workdir, "CreateTopics", self.broker.bootstrap, "1", CONTROL_TOPIC)
        self.worker = ConnectWorker(self.workdir, self.broker.bootstrap)
        self.worker.start()
        self.worker.wait_ready()

    def create_table(self) -> None:
        name = f"kafka-{uuid.uuid4().hex[:10]}"
        self.bucket_arn = self.cli("create-table-bucket", "--name", name)["arn"]
        self.cli("create-namespace", "--table-bucket-arn", self.bucket_arn, "--namespace", self.namespace)
        metadata = {"iceberg": {"schema": {"fields": [
            {"name": "event_id", "type": "string", "required": True},
            {"name": "event_time", "type": "timestamptz"},
            {"name": "event_type", "type": "string"},
        ]}}}
        self.cli("create-table", "--table-bucket-arn", self.bucket_arn, "--namespace", self.namespace,
                 "--name", self.table, "--format", "ICEBERG", "--metadata", json.dumps(metadata))
        got = self.cli("get-table", "--table-bucket-arn", self.bucket_arn, "--namespace", self.namespace,
                       "--name", self.table)
        if got["name"] != self.table:
            raise StepFailed(f"get-table answered {got}")
        print(f"  warehouse {self.bucket_arn}", flush=True)

    def create_connector(self) -> None:
        name = "tablebay-events"
        self.worker.put_connector(name, self.connector_config(
            name, self.topic, f"{self.namespace}.{self.table}"))
        self.worker.wait_running(name)

    def ingest_first_batch(self) -> None:
        start = time.monotonic()
        produce(self.broker, self.workdir, self.topic, "e", 0, self.events)
        produced = time.monotonic()
        self.ids |= expected_ids("e", 0, self.events)
        snapshots = self.wait_exactly_once(self.table, self.ids)
        visible = time.monotonic()
        rate = self.events / (visible - start)
        self.figures.append(
            f"ingest: {self.events} events produced in {produced - start:.1f}s, all visible after "
            f"{visible - start:.1f}s → {rate:.0f} events/s end to end ({snapshots} snapshots, "
            f"commit interval {COMMIT_INTERVAL_MS} ms)")
        print("  " + self.figures[-1], flush=True)

    def check_values(self) -> None:
        """The values, not only the ids: event_type and event_time as produced, and the sink's commit
        bookkeeping in the snapshot summary."""
        tbl, arrow = self.rows(self.table, ("event_id", "event_time", "event_type"))
        types = ("click", "view", "buy")
        by_id = dict(zip(arrow.column("event_id").to_pylist(),
                         zip(arrow.column("event_time").to_pylist(), arrow.column("event_type").to_pylist())))
        for i in (0, 1, 2, self.events // 2, self.events - 1):
            when, kind = by_id[f"e-{i}"]
            if kind != types[i % 3]:
                raise StepFailed(f"e-{i}: event_type {kind!r}, want {types[i % 3]!r}")
            if when is None or int(when.timestamp()) != 1767225600 + i:
                raise StepFailed(f"e-{i}: event_time {when!r}, want 2026-01-01T00:00:00Z + {i}s")
        summary = tbl.current_snapshot().summary
        props = summary.additional_properties if summary is not None else {}
        if "kafka.connect.commit-id" not in props or not any(k.startswith("kafka.connect.offsets")
                                                             for k in props):
            raise StepFailed(f"the snapshot summary lacks the sink's commit id/offsets: {props}")

    def crash_and_resume(self) -> None:
        """Phase 2 in 10 chunks; after chunk 5, once some of phase 2 is committed, kill -9 the worker (with
        chunk 5 in flight), produce chunks 6-10 while it is down, restart it; then phase 3 after the restart."""
        chunk = max(self.events // 10, 1)
        base = self.events
        committed_before = len(self.ids)
        for n in range(5):
            produce(self.broker, self.workdir, self.topic, "e", base + n * chunk, chunk)
            self.ids |= expected_ids("e", base + n * chunk, chunk)

        def some_committed():
            _, arrow = self.rows(self.table)
            return arrow.num_rows > committed_before

        wait_for("a commit of phase 2 before the crash", some_committed, 120, 0.5)
        _, arrow = self.rows(self.table)
        at_kill = arrow.num_rows
        self.worker.kill9()
        print(f"  killed the Connect worker (kill -9) with {at_kill} of {len(self.ids)} produced events "
              f"committed", flush=True)
        for n in range(5, 10):
            produce(self.broker, self.workdir, self.topic, "e", base + n * chunk, chunk)
            self.ids |= expected_ids("e", base + n * chunk, chunk)
        self.worker.start()
        self.worker.wait_ready()
        self.worker.wait_running("tablebay-events")
        phase3 = base + 10 * chunk
        produce(self.broker, self.workdir, self.topic, "e", phase3, self.events // 2)
        self.ids |= expected_ids("e", phase3, self.events // 2)
        snapshots = self.wait_exactly_once(self.table, self.ids)
        print(f"  {len(self.ids)} events exactly once after the restart ({snapshots} snapshots)", flush=True)

    def auto_create_and_evolve(self) -> None:
        """A connector that fans each record out to two tables neither of which exists: the sink creates both,
        then adds a column to both; every commit of the coordinator covers the two tables."""
        name, topic, tables = "tablebay-auto", AUTO_TOPIC, ("auto_events", "auto_events_copy")
        self.worker.put_connector(name, self.connector_config(
            name, topic, ",".join(f"{self.namespace}.{t}" for t in tables),
            **{"iceberg.tables.auto-create-enabled": "true",
               "iceberg.tables.evolve-schema-enabled": "true"}))
        self.worker.wait_running(name)
        produce(self.broker, self.workdir, topic, "a", 0, 500)
        want = expected_ids("a", 0, 500)
        for table in tables:
            self.wait_exactly_once(table, want)
            tbl, _ = self.rows(table)
            columns = {f.name for f in tbl.schema().fields}
            if not {"event_id", "event_time", "event_type"} <= columns or "region" in columns:
                raise StepFailed(f"auto-created table {table} has columns {sorted(columns)}")
        print(f"  auto-created {', '.join(tables)} with columns {sorted(columns)}", flush=True)

        # Events with a field the tables lack: the sink adds the column and writes its values.
        produce(self.broker, self.workdir, topic, "a", 500, 500, extra_field="region")
        want |= expected_ids("a", 500, 500)
        for table in tables:
            self.wait_exactly_once(table, want)
            tbl, arrow = self.rows(table, ("event_id", "region"))
            if "region" not in {f.name for f in tbl.schema().fields}:
                raise StepFailed(f"no region column in {table} after evolution: {tbl.schema()}")
            values = dict(zip(arrow.column("event_id").to_pylist(), arrow.column("region").to_pylist()))
            wrong = [(k, v) for k, v in values.items()
                     if v != (f"v-{k[2:]}" if int(k[2:]) >= 500 else None)]
            if wrong:
                raise StepFailed(f"{table}: {len(wrong)} rows with a wrong region, e.g. {wrong[:5]}")
        print(f"  schema of both evolved to {sorted(f.name for f in tbl.schema().fields)}; region values present",
              flush=True)

    def wrong_secret_rejected(self) -> None:
        """The guide's configuration with a wrong secret key: the catalog answers 403 and the task fails with
        that message; the final step checks it wrote nothing."""
        name = "tablebay-wrong-secret"
        self.worker.put_connector(name, self.connector_config(
            name, self.topic, f"{self.namespace}.{self.table}",
            **{"iceberg.catalog.rest.secret-access-key": "not-the-" + SECRET_ACCESS_KEY}))

        def failed_task_trace():
            status, body = self.worker.rest("GET", f"/connectors/{name}/status")
            if status != 200:
                return None
            traces = [t.get("trace", "") for t in body.get("tasks", []) if t.get("state") == "FAILED"]
            return traces[0] if traces else None

        trace = wait_for(f"connector {name}'s task to fail", failed_task_trace, 120, 1.0)
        if "ForbiddenException" not in trace or "signature" not in trace.lower():
            raise StepFailed(f"the task failed, but not with the server's 403 signature error:\n{trace[:2000]}")
        print(f"  task failed: {trace.splitlines()[0][:200]}", flush=True)
        status, body = self.worker.rest("DELETE", f"/connectors/{name}")
        if status not in (200, 204):
            raise StepFailed(f"DELETE /connectors/{name} → {status}: {body}")

    def final_check(self) -> None:
        """The whole first table once more, after everything else ran."""
        self.wait_exactly_once(self.table, self.ids, timeout=60)

    # --- the run ---

    def run(self) -> int:
        steps = [
            ("start tablebay, a KRaft broker and a distributed Connect worker", self.start_services),
            ("aws s3tables: table bucket, namespace, table (event_id required)", self.create_table),
            ("create the Iceberg sink connector (the guide's properties)", self.create_connector),
            (f"produce {self.events} JSON events; every one visible exactly once", self.ingest_first_batch),
            ("values and snapshot summary as the sink wrote them", self.check_values),
            ("kill -9 the worker mid-stream, restart, produce more: no loss, no duplicate",
             self.crash_and_resume),
            ("auto-create two tables from one topic, then evolve their schema with a new field",
             self.auto_create_and_evolve),
            ("a connector with a wrong secret key fails with the catalog's 403", self.wrong_secret_rejected),
            ("the first table still holds every event exactly once", self.final_check),
        ]
        try:
            for name, fn in steps:
                self.step(name, fn)
        except Exception:  # noqa: BLE001 (already reported by step())
            done = self.passed + self.failed
            for name, _ in steps[done:]:
                print(f"FAIL {name}: not run (an earlier step failed)", flush=True)
            self.failed += len(steps) - done
            print(self.server.log_tail(30), flush=True)
        finally:
            for proc in (self.worker, self.broker):
                if proc is not None:
                    proc.stop()
            self.server.stop()
        for line in self.figures:
            print(line)
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000, help="events in the first batch (default 10000)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs) afterwards")
    args = parser.parse_args()
    if not (LIB / "kafka").is_dir() or not (LIB / "plugins" / "iceberg").is_dir():
        print(f"{LIB} is not built: run scripts/jvm-kafka-connect.sh", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="tablebay-kafka-connect-"))
    print(f"work directory {workdir}", flush=True)
    code = Scenario(workdir, args.events).run()
    if args.keep or code != 0:
        print(f"logs kept in {workdir}", flush=True)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
