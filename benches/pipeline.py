#!/usr/bin/env python3
"""Benchmark of the request pipeline (issue 15): two release binaries side by side on the operations every surface
shares the pipeline for. It is never part of the tests.

    python3 benches/pipeline.py --bin NEW --compare-bin OLD [--rounds 3] [--seconds 5] [--connections 16]

Rows, each driven by wrk (Debian package `wrk`: one event-loop thread, `--connections` keep-alive connections):
- `GetTable`: control plane `GET /get-table?tableBucketARN=…&namespace=bench&name=t`, SigV4 header-signed;
- `loadTable`: Iceberg REST `GET /iceberg/v1/{prefix}/namespaces/bench/tables/t`, SigV4 header-signed;
- `PUT 4 KiB` and `GET 4 KiB`: S3 objects of a table's storage, presigned `UNSIGNED-PAYLOAD` URLs: PUTs to new keys
  (as table writers do), GETs over 256 of them.

The requests are signed once, before the timed phase, and replayed (a SigV4 signature holds for 15 minutes), so the
client costs microseconds and the server gets nearly both cores; every request is still verified, authorized and
logged by the server as a fresh one. Each round starts a fresh server per binary with a fresh data directory, and
the rounds alternate the order (A B, B A, …); the table shows the median requests/s of each binary, the change,
and the p99 latency. Machines here are noisy: read a change within the spread of the rounds as noise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from s3_throughput import Server, presign, sign  # noqa: E402

# wrk script: requests from a file of lines `METHOD<TAB>path<TAB>header: value<TAB>…`, sent round-robin; a PUT
# carries BENCH_SIZE bytes.
WRK_SCRIPT = r"""
local requests = {}
local body = string.rep("x", tonumber(os.getenv("BENCH_SIZE") or "0"))
for line in io.lines(os.getenv("BENCH_REQUESTS")) do
  local fields = {}
  for field in string.gmatch(line, "[^\t]+") do table.insert(fields, field) end
  local headers = {}
  for i = 3, #fields do
    local name, value = string.match(fields[i], "^([^:]+): (.*)$")
    headers[name] = value
  end
  local payload = nil
  if fields[1] == "PUT" then payload = body end
  table.insert(requests, wrk.format(fields[1], fields[2], headers, payload))
end
local i = 0
request = function()
  i = i % #requests + 1
  return requests[i]
end
"""

ROWS = ["GetTable", "loadTable", "PUT 4 KiB", "GET 4 KiB"]
SIZE = 4 * 1024
# Table writers put new files, never over old ones: PUT cycles through more keys than a row can write (an
# overwrite would also queue the old blob's deletion), GET through the first ones.
PUT_KEYS = 65536
GET_KEYS = 256
WARM_UP_PUTS = "PUT 4 KiB, warm-up"  # its own keys, so that the timed PUTs overwrite nothing


def signed_line(method: str, url: str, service: str) -> str:
    """One header-signed request as a line of the wrk script's file."""
    parts = urlsplit(url)
    path = parts.path
    query = "&".join(sorted(parts.query.split("&"))) if parts.query else ""
    headers = sign(method, parts.netloc, path, query, {}, hashlib.sha256(b"").hexdigest(), service=service)
    target = f"{path}?{parts.query}" if parts.query else path
    # `Host` capitalised, as wrk.format looks it up (a second Host header would be a 400).
    headers["Host"] = headers.pop("host")
    return "\t".join([method, target] + [f"{k}: {v}" for k, v in headers.items()])


def prepare(server: Server, work: Path) -> dict[str, tuple[Path, int, str]]:
    """A bucket, namespace and Iceberg table; the request files of every row: row → (file, body size, base URL)."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    arn = server.control("PUT", "/buckets", {"name": name})["arn"]
    seg = quote(arn, safe="")
    server.control("PUT", f"/namespaces/{seg}", {"namespace": ["bench"]})
    # The control-plane client signs for `s3tables`, which the Iceberg REST catalog accepts too.
    server.control("POST", f"/iceberg/v1/{seg}/namespaces/bench/tables", {
        "name": "t", "schema": {"type": "struct", "schema-id": 0,
                                "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}})
    got = server.control("GET", f"/tables/{seg}/bench/t/metadata-location")
    storage = got["warehouseLocation"].removeprefix("s3://").split("/")[0]
    s3_host = urlsplit(server.s3_url).netloc
    files = {}

    def write(row: str, lines: list[str], size: int, base: str) -> None:
        path = work / f"{row.replace(' ', '-')}.txt"
        path.write_text("".join(line + "\n" for line in lines))
        files[row] = (path, size, base)

    get_table = f"{server.tables_url}/get-table?namespace=bench&name=t&tableBucketARN={seg}"
    write("GetTable", [signed_line("GET", get_table, "s3tables")], 0, server.tables_url)
    load = f"{server.tables_url}/iceberg/v1/{seg}/namespaces/bench/tables/t"
    write("loadTable", [signed_line("GET", load, "s3tables")], 0, server.tables_url)
    # The requests are formatted when the script loads, before wrk knows its Host: every line names it.
    for row, folder in [("PUT 4 KiB", "data"), (WARM_UP_PUTS, "warm-up")]:
        puts = [f"PUT\t{presign('PUT', s3_host, f'/{storage}/{folder}/{i}')}\tHost: {s3_host}"
                for i in range(PUT_KEYS)]
        write(row, puts, SIZE, server.s3_url)
    # wrk spends the script's first request checking it, so key 0 is never sent: GET keys 1 to 256.
    gets = [f"GET\t{presign('GET', s3_host, f'/{storage}/data/{i}')}\tHost: {s3_host}"
            for i in range(1, GET_KEYS + 1)]
    write("GET 4 KiB", gets, 0, server.s3_url)
    return files


def run_wrk(requests: Path, size: int, base: str, connections: int, seconds: float, work: Path) -> dict:
    script = work / "pipeline.lua"
    script.write_text(WRK_SCRIPT)
    env = {**os.environ, "BENCH_REQUESTS": str(requests), "BENCH_SIZE": str(size)}
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency",
                          "-s", str(script), base], env=env, capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if bad:
        raise SystemExit(f"{requests.name}: {bad.group(1)} failed requests\n{out}")
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    p99_ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
    return {"rate": rate, "p99_ms": p99_ms}


def measure(binary: Path, args, root: Path, label: str) -> dict[str, dict]:
    work = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=root))
    server = Server(binary, work, label)
    server.start()
    try:
        files = prepare(server, work)
        out = {}
        for row in ROWS:
            path, size, base = files[row]
            warm_up = files[WARM_UP_PUTS][0] if row == "PUT 4 KiB" else path
            run_wrk(warm_up, size, base, args.connections, 1, work)
            out[row] = run_wrk(path, size, base, args.connections, args.seconds, work)
        return out
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, required=True, help="binary A (the change)")
    parser.add_argument("--compare-bin", type=Path, required=True, help="binary B (the baseline)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tablebay-pipeline-bench-"))
    results: dict[str, list[dict]] = {"A": [], "B": []}
    for n in range(args.rounds):
        order = [("A", args.bin), ("B", args.compare_bin)]
        if n % 2:
            order.reverse()
        for label, binary in order:
            results[label].append(measure(binary, args, root, f"{label}{n}"))
            print(f"round {n + 1} {label}: " + ", ".join(
                f"{row} {results[label][-1][row]['rate']:.0f}/s" for row in ROWS), flush=True)
    print(f"\nA = {args.bin}\nB = {args.compare_bin}\n{args.rounds} alternating rounds, {args.seconds:.0f} s per row, "
          f"{args.connections} connections, load average {os.getloadavg()[0]:.2f}\n")
    print(f"{'row':<11} {'A req/s':>9} {'B req/s':>9} {'A vs B':>7} {'rounds A/B':>16} {'A p99':>8} {'B p99':>8}")
    for row in ROWS:
        a = [r[row]["rate"] for r in results["A"]]
        b = [r[row]["rate"] for r in results["B"]]
        ratios = [x / y for x, y in zip(a, b)]
        ma, mb = statistics.median(a), statistics.median(b)
        pa = statistics.median(r[row]["p99_ms"] for r in results["A"])
        pb = statistics.median(r[row]["p99_ms"] for r in results["B"])
        print(f"{row:<11} {ma:>9.0f} {mb:>9.0f} {ma / mb - 1:>+7.1%} {min(ratios) - 1:>+7.1%}..{max(ratios) - 1:<+7.1%} "
              f"{pa:>6.1f}ms {pb:>6.1f}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
