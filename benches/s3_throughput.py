#!/usr/bin/env python3
"""S3 data-plane throughput of the RELEASE binary, beside a plain file copy of the same bytes on the same
disk in the same run.

    python3 benches/s3_throughput.py                 # builds `cargo build --release -p tablebay` first
    python3 benches/s3_throughput.py --bin PATH      # a binary you built
    python3 benches/s3_throughput.py --quick         # fewer objects, for a smoke run
    python3 benches/s3_throughput.py --bin NEW --compare-bin OLD   # two builds side by side, same run

It starts `tablebay serve` on 127.0.0.1 (ephemeral ports) with a temporary data dir under --workdir
(default ~/.cache/tablebay-bench, the disk the plain copy also writes to), creates one table, and measures
PutObject and GetObject for 4 KiB, 1 MiB and 64 MiB objects with 1 and 16 concurrent clients. Each cell runs
for about --seconds (default 8) or until its byte budget is spent, whichever comes first, so the whole run
is bounded (a few minutes). It is never part of the tests.

The client is a raw SigV4 client (`http.client`, one keep-alive connection per client, `UNSIGNED-PAYLOAD`,
the signature computed per request), one process per concurrent client, so neither boto3's per-request
overhead nor the GIL is what gets measured. The plain copy writes the same sizes with the same number of
writer processes: Python `open/write/close` without fsync, the same with fsync, and `cp` of a 64 MiB file.

With --compare-bin, the same PUT/GET cells also run against a second binary (its own server and data dir,
one after the other in the same run), and a second table sets the two side by side: how to measure what a
change costs, such as encryption at rest (every table is encrypted; a build without it is the baseline), or
what a speed-up gains.

Only Python's standard library is needed. Results are printed as a table; `--json FILE` also saves them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import hmac
import http.client
import json
import multiprocessing as mp
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit

KIB, MIB = 1024, 1024 * 1024
ACCESS_KEY = "TBBENCHROOTACCESSKEY"
SECRET_KEY = "tablebay-bench-root-secret-0123456789abcdef"
REGION = "us-east-1"
READY = re.compile(r"tablebay (tables|s3) listener ready at (http://\S+)")
CLIENTS = [1, 16]
SIZE_NAMES = {"4k": 4 * KIB, "1m": MIB, "64m": 64 * MIB}
REPO = Path(__file__).resolve().parents[1]


# --- SigV4 (header auth, UNSIGNED-PAYLOAD or a given payload hash) ---

def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def signing_key(day: str, service: str) -> bytes:
    k = _hmac(("AWS4" + SECRET_KEY).encode(), day)
    return _hmac(_hmac(_hmac(k, REGION), service), "aws4_request")


def sign(method: str, host: str, path: str, query: str, headers: dict[str, str], payload_hash: str,
         service: str = "s3") -> dict[str, str]:
    now = dt.datetime.now(dt.timezone.utc)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    scope = f"{day}/{REGION}/{service}/aws4_request"
    out = {k.lower(): v for k, v in headers.items()}
    out.update({"host": host, "x-amz-date": amz_date, "x-amz-content-sha256": payload_hash})
    names = sorted(out)
    canonical = "\n".join([method, path, query, "".join(f"{n}:{out[n].strip()}\n" for n in names),
                           ";".join(names), payload_hash])
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    sig = hmac.new(signing_key(day, service), sts.encode(), hashlib.sha256).hexdigest()
    out["authorization"] = (f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{scope}, "
                            f"SignedHeaders={';'.join(names)}, Signature={sig}")
    return out


def presign(method: str, host: str, path: str, expires: int = 3600) -> str:
    """A presigned URL path (SigV4 query auth, `UNSIGNED-PAYLOAD`): a request needs no signing work then."""
    now = dt.datetime.now(dt.timezone.utc)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    scope = f"{day}/{REGION}/s3/aws4_request"
    params = {"X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": f"{ACCESS_KEY}/{scope}",
              "X-Amz-Date": amz_date, "X-Amz-Expires": str(expires), "X-Amz-SignedHeaders": "host"}
    query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in sorted(params.items()))
    canonical = "\n".join([method, path, query, f"host:{host}\n", "host", "UNSIGNED-PAYLOAD"])
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    sig = hmac.new(signing_key(day, "s3"), sts.encode(), hashlib.sha256).hexdigest()
    return f"{path}?{query}&X-Amz-Signature={sig}"


class Client:
    """One keep-alive connection to the S3 listener."""

    def __init__(self, base_url: str):
        parts = urlsplit(base_url)
        self.host, self.port, self.netloc = parts.hostname, parts.port, parts.netloc
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=300)

    def request(self, method: str, path: str, body: bytes = b"", sink: bool = False) -> tuple[int, int]:
        headers = sign(method, self.netloc, path, "", {"content-length": str(len(body))} if body or method == "PUT"
                       else {}, "UNSIGNED-PAYLOAD")
        del headers["host"]
        for attempt in (1, 2):
            try:
                self.conn.request(method, path, body=body if body else None, headers=headers)
                resp = self.conn.getresponse()
                n = 0
                if sink:
                    while True:
                        chunk = resp.read(1 << 20)
                        if not chunk:
                            break
                        n += len(chunk)
                else:
                    n = len(resp.read())
                return resp.status, n
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                if attempt == 2:
                    raise
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=300)
        raise AssertionError("unreachable")


# --- the server ---

class Server:
    def __init__(self, binary: Path, workdir: Path, label: str = "tablebay"):
        self.binary = binary
        self.data = workdir / f"{label}-data"
        self.log = open(workdir / f"{label}.log", "w")
        self.proc = None
        self.tables_url = self.s3_url = None

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEBAY_")}
        env.update(TABLEBAY_ROOT_ACCESS_KEY_ID=ACCESS_KEY, TABLEBAY_ROOT_SECRET_ACCESS_KEY=SECRET_KEY,
                   TABLEBAY_LOG=env.get("TABLEBAY_BENCH_LOG", "warn"))
        cmd = [str(self.binary), "serve", "--data-dir", str(self.data), "--tables-addr", "127.0.0.1:0",
               "--s3-addr", "127.0.0.1:0", "--region", REGION, "--account-id", "111122223333",
               "--arn-flavor", "aws"]
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     start_new_session=True)
        urls: dict[str, str] = {}
        deadline = time.monotonic() + 60
        lines: list[str] = []

        def pump():
            for line in self.proc.stdout:
                lines.append(line)
                self.log.write(line)
            lines.append("")

        threading.Thread(target=pump, daemon=True).start()
        seen = 0
        while len(urls) < 2:
            if time.monotonic() > deadline:
                raise SystemExit("the server did not print its ready lines within 60 s (see tablebay.log)")
            if seen < len(lines):
                line = lines[seen]
                seen += 1
                if line == "":
                    raise SystemExit(f"the server exited with {self.proc.wait()} (see tablebay.log)")
                m = READY.search(line)
                if m:
                    urls[m.group(1)] = m.group(2).rstrip("/")
            else:
                time.sleep(0.02)
        self.tables_url, self.s3_url = urls["tables"], urls["s3"]

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far (Linux /proc)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return float("nan")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()

    def control(self, method: str, path: str, body: dict | None = None) -> dict:
        parts = urlsplit(self.tables_url)
        data = json.dumps(body).encode() if body is not None else b""
        headers = sign(method, parts.netloc, path, "", {"content-type": "application/json"} if body else {},
                       hashlib.sha256(data).hexdigest(), service="s3tables")
        del headers["host"]
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        conn.request(method, path, body=data or None, headers=headers)
        resp = conn.getresponse()
        text = resp.read()
        if resp.status != 200:
            raise SystemExit(f"{method} {path}: {resp.status} {text[:300]!r}")
        return json.loads(text) if text else {}

    def create_table(self) -> str:
        """A table bucket, namespace and table; returns the table's storage bucket."""
        name = f"bench-{uuid.uuid4().hex[:8]}"
        arn = self.control("PUT", "/buckets", {"name": name})["arn"]
        seg = quote(arn, safe="")
        self.control("PUT", f"/namespaces/{seg}", {"namespace": ["bench"]})
        self.control("PUT", f"/tables/{seg}/bench", {"name": "objects", "format": "ICEBERG"})
        got = self.control("GET", f"/tables/{seg}/bench/objects/metadata-location")
        return got["warehouseLocation"].removeprefix("s3://").split("/")[0]


# --- workers (one process per concurrent client) ---

def _payload(size: int, worker: int) -> bytes:
    block = hashlib.sha256(f"bench-{worker}".encode()).digest() * (64 * KIB // 32)
    return (block * (size // len(block) + 1))[:size]


def _s3_worker(args) -> tuple[int, int, float, float, int]:
    """PUTs (or GETs) objects `prefix/<worker>/<i>` until `count` are done or `deadline` passes.
    Returns (objects, bytes, start time, end time, errors); wall clock, so processes can be combined."""
    op, base_url, bucket, prefix, worker, size, count, deadline = args
    client = Client(base_url)
    body = _payload(size, worker) if op == "PUT" else b""
    done = nbytes = errors = 0
    start = time.time()
    for i in range(count):
        if time.time() > deadline and done > 0:
            break
        path = f"/{bucket}/{prefix}/{worker}/{i}"
        try:
            status, n = client.request(op, path, body, sink=(op == "GET"))
        except OSError:
            status, n = 0, 0
            client = Client(base_url)
        if status != 200:
            errors += 1
            if errors >= 10 and done == 0:
                break  # the server refuses this cell: report the errors, don't spin
            continue
        done += 1
        nbytes += size if op == "PUT" else n
    return done, nbytes, start, time.time(), errors


def _file_worker(args) -> tuple[int, int, float, float, int]:
    mode, directory, worker, size, count, deadline = args
    body = _payload(size, worker)
    d = Path(directory) / str(worker)
    d.mkdir(parents=True, exist_ok=True)
    done = 0
    start = time.time()
    for i in range(count):
        if time.time() > deadline and done > 0:
            break
        with open(d / str(i), "wb") as f:
            f.write(body)
            if mode == "fsync":
                f.flush()
                os.fsync(f.fileno())
        done += 1
    return done, done * size, start, time.time(), 0


WRK_SCRIPT = """
local paths = {}
for line in io.lines(os.getenv("BENCH_PATHS")) do paths[#paths + 1] = line end
local method, size = os.getenv("BENCH_METHOD"), tonumber(os.getenv("BENCH_SIZE"))
local body = method == "PUT" and string.rep("b", size) or nil
local i = 0
request = function()
  i = i + 1
  if i > #paths then i = 1 end
  return wrk.format(method, paths[i], nil, body)
end
"""


def run_wrk(op: str, base_url: str, bucket: str, prefix: str, size: int, keys: int, clients: int,
            seconds: float, work: Path) -> dict:
    """One cell with wrk (one event-loop thread, `clients` keep-alive connections) cycling through presigned URLs
    of keys `prefix/0 … keys-1`: the client costs a few microseconds per request, so the server gets the cores."""
    parts = urlsplit(base_url)
    paths = work / f"wrk-{op}-{prefix}.txt"
    paths.write_text("".join(presign(op, parts.netloc, f"/{bucket}/{prefix}/{i}") + "\n" for i in range(keys)))
    script = work / "wrk.lua"
    script.write_text(WRK_SCRIPT)
    env = {**os.environ, "BENCH_PATHS": str(paths), "BENCH_METHOD": op, "BENCH_SIZE": str(size)}
    out = subprocess.run(["wrk", "-t1", f"-c{clients}", f"-d{max(1, round(seconds))}s", "--timeout", "300s", "-s", str(script),
                          base_url], env=env, capture_output=True, text=True, check=True).stdout
    total = int(re.search(r"(\d+) requests in", out).group(1))
    elapsed = re.search(r"requests in ([\d.]+)(m?s|m)", out)
    secs = float(elapsed.group(1)) * {"s": 1, "ms": 0.001, "m": 60}[elapsed.group(2)]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = int(bad.group(1)) if bad else 0
    paths.unlink()
    return {"objects": total - errors, "bytes": (total - errors) * size, "seconds": secs, "errors": errors,
            "per_client": [min(total, keys)]}


def run_parallel(fn, arg_list) -> dict:
    """Runs one task per process. The time is from the first worker's start to the last one's end, so
    process start-up is not counted."""
    ctx = mp.get_context("fork")
    with ctx.Pool(len(arg_list)) as pool:
        results = pool.map(fn, arg_list)
    return {"objects": sum(r[0] for r in results), "bytes": sum(r[1] for r in results),
            "seconds": max(r[3] for r in results) - min(r[2] for r in results),
            "errors": sum(r[4] for r in results), "per_client": [r[0] for r in results]}


def plan(size: int, clients: int, seconds: float, quick: bool) -> int:
    """Objects per client: bounded by a byte budget (so 64 MiB x 16 stays within a few GiB) and a count."""
    budget = (512 if quick else 2048) * MIB
    per_client = max(1, budget // (size * clients))
    return min(per_client, 2000 if quick else 20000)


def human(size: int) -> str:
    return f"{size // MIB} MiB" if size >= MIB else f"{size // KIB} KiB"


def cp_baseline(workdir: Path, size: int, repeats: int) -> float:
    """MiB/s of `cp` of a `size` file, `repeats` times (page cache warm, no fsync, as cp does)."""
    src = workdir / "cp-src.bin"
    src.write_bytes(_payload(size, 0))
    t0 = time.perf_counter()
    for i in range(repeats):
        subprocess.run(["cp", str(src), str(workdir / f"cp-dst-{i}.bin")], check=True)
    elapsed = time.perf_counter() - t0
    for i in range(repeats):
        (workdir / f"cp-dst-{i}.bin").unlink()
    src.unlink()
    return size * repeats / MIB / elapsed


def build_release() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR") or Path.home() / ".cache" / "tablebay-target")
    print(f"building the release binary (cargo build --release -p tablebay, CARGO_TARGET_DIR={target}) …",
          file=sys.stderr)
    subprocess.run(["cargo", "build", "--release", "-p", "tablebay"], cwd=REPO, check=True,
                   env={**os.environ, "CARGO_TARGET_DIR": str(target)})
    return target / "release" / "tablebay"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", type=Path, help="tablebay binary (default: build the release binary)")
    ap.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "tablebay-bench",
                    help="where the data dir and the plain copies go (one disk)")
    ap.add_argument("--seconds", type=float, default=8.0, help="time budget per cell")
    ap.add_argument("--quick", action="store_true", help="smaller budgets (a smoke run)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--compare-bin", type=Path, help="a second tablebay binary to measure in the same run")
    ap.add_argument("--rounds", type=int, default=1,
                    help="with --compare-bin: measure both binaries this many times, alternating A B, B A, A B, ... "
                         "(a fresh server each time) and compare the medians (default: 1)")
    ap.add_argument("--sizes", nargs="+", choices=["4k", "1m", "64m"], default=["4k", "1m", "64m"],
                    help="object sizes to measure (default: all three)")
    ap.add_argument("--clients", nargs="+", type=int, default=CLIENTS, help="concurrent clients (default: 1 16)")
    ap.add_argument("--loader", choices=["python", "wrk"], default="python",
                    help="python: one SigV4-signing process per client; wrk: one wrk thread with a keep-alive "
                         "connection per client and presigned URLs (Debian package wrk), so the client costs "
                         "little CPU and the server gets the cores")
    args = ap.parse_args()

    binary = args.bin or build_release()
    if not binary.is_file():
        raise SystemExit(f"{binary} not found")
    args.workdir.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(args.workdir).free
    if free < 8 * 1024 * MIB:
        raise SystemExit(f"{args.workdir} has {free // MIB} MiB free; the bench needs about 8 GiB")
    work = Path(tempfile.mkdtemp(prefix="run-", dir=args.workdir))
    server = Server(binary, work)
    rows = []
    # One (A rows, B rows) pair per round; the first A is the run the main table shows.
    rounds: list[tuple[list[dict], list[dict]]] = []
    try:
        rows = measure(server, args, work, with_plain=True)
        if args.compare_bin:
            rounds.append((rows, measure_fresh(args.compare_bin, args, work, "compare-1")))
            for n in range(2, args.rounds + 1):
                # Alternate the order (A B, B A, A B, ...) so a drift of the machine's speed affects both alike.
                if n % 2 == 0:
                    b_rows = measure_fresh(args.compare_bin, args, work, f"compare-{n}")
                    a_rows = measure_fresh(binary, args, work, f"tablebay-{n}")
                else:
                    a_rows = measure_fresh(binary, args, work, f"tablebay-{n}")
                    b_rows = measure_fresh(args.compare_bin, args, work, f"compare-{n}")
                rounds.append((a_rows, b_rows))
        cp_mibs = cp_baseline(work, 64 * MIB, 4 if args.quick else 16)
    finally:
        server.stop()
        data_bytes = sum(p.stat().st_size for p in work.rglob("*") if p.is_file())
        shutil.rmtree(work, ignore_errors=True)

    print()
    client = ("wrk, presigned URLs, one connection per client" if args.loader == "wrk"
              else "raw SigV4 http.client, UNSIGNED-PAYLOAD, one process per client")
    print(f"S3 data plane (release binary, {os.cpu_count()} cores, data dir and plain copies on one disk; "
          f"client: {client})")
    header = (f"{'size':>7} {'clients':>7} | {'PUT obj/s':>10} {'PUT MiB/s':>10} | {'GET obj/s':>10} {'GET MiB/s':>10}"
              f" | {'copy obj/s':>10} {'copy MiB/s':>10} {'copy+fsync':>10} | {'PUT/copy':>8} | {'srv CPU PUT':>11} {'GET':>5}")
    print(header)
    print("-" * len(header))
    for cell in rows:
        put, get, plain, plain_fs = cell["PUT"], cell["GET"], cell["plain-nofsync"], cell["plain-fsync"]

        def rate(x):
            secs = max(x["seconds"], 1e-9)
            return x["objects"] / secs, x["bytes"] / MIB / secs

        po, pm = rate(put)
        go, gm = rate(get)
        co, cm = rate(plain)
        _, cfm = rate(plain_fs)
        cell["ratio"] = pm / cm if cm else 0.0
        errors = put["errors"] + get["errors"]
        print(f"{human(cell['size']):>7} {cell['clients']:>7} | {po:>10.0f} {pm:>10.1f} | {go:>10.0f} {gm:>10.1f}"
              f" | {co:>10.0f} {cm:>10.1f} {cfm:>10.1f} | {cell['ratio']:>7.0%} | "
              f"{put['server_cpu'] / max(put['seconds'], 1e-9):>10.0%} {get['server_cpu'] / max(get['seconds'], 1e-9):>5.0%}" + (f"  ({errors} errors)" if errors else ""))
    print(f"cp of a 64 MiB file: {cp_mibs:.1f} MiB/s")
    print("srv CPU: the server's CPU time over the cell's wall time (200% = both of 2 cores); load average "
          f"at the end: {os.getloadavg()[0]:.1f}")
    large = [c for c in rows if c["size"] == 64 * MIB]
    small16 = next((c for c in rows if c["size"] == 4 * KIB and c["clients"] == 16), None)
    if large:
        best_large = max(c["ratio"] for c in large)
        print(f"target: 64 MiB PUT >= 80% of the plain copy: best {best_large:.0%} -> "
              f"{'met' if best_large >= 0.8 else 'NOT met'}")
    if small16:
        small_rate = small16["PUT"]["objects"] / max(small16["PUT"]["seconds"], 1e-9)
        print(f"target: 4 KiB PUT >= 2000 objects/s (16 clients): {small_rate:.0f} -> "
              f"{'met' if small_rate >= 2000 else 'NOT met'}")
    print(f"(bytes on disk at the end of the run, before cleanup: {data_bytes / MIB:.0f} MiB)")
    if rounds:
        print_comparison(binary, args.compare_bin, rounds)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "rounds": [{"A": a, "B": b} for a, b in rounds],
                                         "cp_64mib_mibs": cp_mibs}, indent=2))
    return 0


def measure(server: Server, args, work: Path, with_plain: bool) -> list[dict]:
    """Starts `server` and runs every cell against one fresh table: PUT then GET, and with `with_plain` the
    plain copies of the same sizes. The server is left running (the caller stops it)."""
    rows = []
    server.start()
    bucket = server.create_table()
    print(f"tablebay {server.binary} on {server.s3_url}, data dir {server.data}, {os.cpu_count()} cores",
          file=sys.stderr)
    for size in [SIZE_NAMES[name] for name in args.sizes]:
        for clients in args.clients:
            count = plan(size, clients, args.seconds, args.quick)
            prefix = f"b{size}-{clients}"
            cell = {"size": size, "clients": clients}
            for op in ("PUT", "GET"):
                deadline = time.time() + args.seconds
                cpu0 = server.cpu_seconds()
                if args.loader == "wrk":
                    # GET cycles through the keys PUT completed (all but the last few in flight at its end).
                    keys = (count * clients if op == "PUT"
                            else max(1, min(count * clients, cell["PUT"]["objects"] - clients)))
                    cell[op] = run_wrk(op, server.s3_url, bucket, prefix, size, keys, clients, args.seconds, work)
                else:
                    # GET reads back exactly what each client wrote.
                    counts = [count] * clients if op == "PUT" else cell["PUT"]["per_client"]
                    cell[op] = run_parallel(_s3_worker, [(op, server.s3_url, bucket, prefix, w, size, counts[w],
                                                          deadline) for w in range(clients)])
                cell[op]["server_cpu"] = server.cpu_seconds() - cpu0
            if with_plain:
                for mode in ("nofsync", "fsync"):
                    directory = work / f"plain-{mode}-{size}-{clients}"
                    deadline = time.time() + args.seconds
                    cell[f"plain-{mode}"] = run_parallel(
                        _file_worker, [(mode, str(directory), w, size, count, deadline) for w in range(clients)])
                    shutil.rmtree(directory, ignore_errors=True)
            rows.append(cell)
            print(f"  done: {human(size)} x {clients} clients", file=sys.stderr)
    return rows


def measure_fresh(binary: Path, args, work: Path, label: str) -> list[dict]:
    """Every cell against a fresh server of `binary`, whose data dir is deleted afterwards."""
    server = Server(binary, work, label=label)
    try:
        return measure(server, args, work, with_plain=False)
    finally:
        server.stop()
        shutil.rmtree(server.data, ignore_errors=True)


def print_comparison(binary: Path, other: Path, rounds: list[tuple[list[dict], list[dict]]]) -> None:
    """The same cells of two binaries side by side: the median over the rounds of MiB/s (objects/s for 4 KiB),
    the change between the medians, the spread of the per-round changes, and the server's CPU per MiB."""
    print()
    print(f"side by side, same run: A = {binary}, B = {other} (--compare-bin), median of {len(rounds)} "
          f"round(s); A/B - 1 is A's change; range: the lowest and highest change of one round; "
          f"ms/MiB: the server's CPU time per MiB moved")
    header = (f"{'size':>7} {'clients':>7} | {'PUT A':>9} {'PUT B':>9} {'A vs B':>7} {'range':>11} | {'GET A':>9}"
              f" {'GET B':>9} {'A vs B':>7} {'range':>11} | {'GET ms/MiB A':>12} {'B':>5} | unit")
    print(header)
    print("-" * len(header))
    for i, first in enumerate(rounds[0][0]):
        small = first["size"] < MIB

        def rate(x):
            secs = max(x["seconds"], 1e-9)
            return x["objects"] / secs if small else x["bytes"] / MIB / secs

        def cpu_per_mib(x):
            return x["server_cpu"] * 1000 / (x["bytes"] / MIB) if x["bytes"] else float("nan")

        line = f"{human(first['size']):>7} {first['clients']:>7}"
        for op in ("PUT", "GET"):
            a = [rate(r[0][i][op]) for r in rounds]
            b = [rate(r[1][i][op]) for r in rounds]
            ma, mb = statistics.median(a), statistics.median(b)
            change = f"{ma / mb - 1:+.0%}" if mb else "n/a"
            per_round = [x / y - 1 for x, y in zip(a, b) if y]
            spread = f"{min(per_round):+.0%}..{max(per_round):+.0%}" if len(per_round) > 1 else ""
            line += f" | {ma:>9.1f} {mb:>9.1f} {change:>7} {spread:>11}"
        cpu_a = statistics.median(cpu_per_mib(r[0][i]["GET"]) for r in rounds)
        cpu_b = statistics.median(cpu_per_mib(r[1][i]["GET"]) for r in rounds)
        print(line + f" | {cpu_a:>12.2f} {cpu_b:>5.2f} | {'obj/s' if small else 'MiB/s'}")


if __name__ == "__main__":
    sys.exit(main())
