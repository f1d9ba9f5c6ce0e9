#!/usr/bin/env python3
"""What authorization costs on the S3 data plane: 4 KiB PUT and GET objects/s, side by side in one run, for

- the instance root (long-term key, no identity policies to load),
- a user whose identity policy allows GetTableData/PutTableData on the bucket,
- the same user through STS session credentials (key, session token check, session policy),
- vended credentials of the Iceberg REST catalog for the table (a session policy naming the table),

each with 1 and 8 concurrent clients on keep-alive connections, against the real release binary.

    python3 benches/authz_overhead.py [--bin PATH] [--seconds 5]

Standard library only; reuses the server and control-plane helpers of s3_throughput.py.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import hmac
import http.client
import json
import shutil
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import s3_throughput as base  # noqa: E402

REGION = base.REGION


class Creds:
    def __init__(self, key: str, secret: str, token: str | None = None):
        self.key, self.secret, self.token = key, secret, token


def sign(creds: Creds, method: str, netloc: str, path: str, query: str, headers: dict[str, str], payload_hash: str,
         service: str) -> dict[str, str]:
    now = dt.datetime.now(dt.timezone.utc)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    scope = f"{day}/{REGION}/{service}/aws4_request"
    out = {k.lower(): v for k, v in headers.items()}
    out.update({"host": netloc, "x-amz-date": amz_date, "x-amz-content-sha256": payload_hash})
    if creds.token:
        out["x-amz-security-token"] = creds.token
    names = sorted(out)
    canonical = "\n".join([method, path, query, "".join(f"{n}:{out[n].strip()}\n" for n in names),
                           ";".join(names), payload_hash])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = hmac.new(("AWS4" + creds.secret).encode(), day.encode(), hashlib.sha256).digest()
    for part in (REGION, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    out["authorization"] = (f"AWS4-HMAC-SHA256 Credential={creds.key}/{scope}, "
                            f"SignedHeaders={';'.join(names)}, Signature={sig}")
    del out["host"]
    return out


def call(url: str, creds: Creds, method: str, path: str, body: bytes = b"", service: str = "s3tables",
         content_type: str | None = "application/json", extra: dict[str, str] | None = None) -> bytes:
    parts = urlsplit(url)
    headers = dict(extra or {})
    if content_type and body:
        headers["content-type"] = content_type
    headers = sign(creds, method, parts.netloc, path, "", headers, hashlib.sha256(body).hexdigest(), service)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    conn.request(method, path, body=body or None, headers=headers)
    resp = conn.getresponse()
    text = resp.read()
    if resp.status != 200:
        raise SystemExit(f"{method} {path}: {resp.status} {text[:300]!r}")
    return text


def worker(s3_url: str, creds: Creds, bucket: str, prefix: str, seconds: float, out: list) -> None:
    parts = urlsplit(s3_url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    body = b"x" * 4096
    keys, puts, gets = [], 0, 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        path = f"/{bucket}/{prefix}/{puts}"
        headers = sign(creds, "PUT", parts.netloc, path, "", {"content-length": "4096"}, "UNSIGNED-PAYLOAD", "s3")
        conn.request("PUT", path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 200, resp.status
        keys.append(path)
        puts += 1
    put_time = seconds
    started = time.monotonic()
    for path in keys:
        headers = sign(creds, "GET", parts.netloc, path, "", {}, "UNSIGNED-PAYLOAD", "s3")
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 200, resp.status
        gets += 1
    out.append((puts, put_time, gets, time.monotonic() - started))


def measure(s3_url: str, creds: Creds, bucket: str, label: str, clients: int, seconds: float) -> tuple[float, float]:
    results: list = []
    threads = [threading.Thread(target=worker, args=(s3_url, creds, bucket, f"{label}-{clients}-{i}", seconds, results))
               for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    put_rate = sum(r[0] for r in results) / max(r[1] for r in results)
    get_rate = sum(r[2] for r in results) / max(r[3] for r in results)
    return put_rate, get_rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="the tablebay binary (default: build the release binary)")
    parser.add_argument("--seconds", type=float, default=5.0, help="PUT phase per cell (default 5)")
    args = parser.parse_args()
    binary = args.bin or base.build_release()
    workdir = Path(tempfile.mkdtemp(prefix="tablebay-authz-bench-"))
    server = base.Server(binary, workdir)
    try:
        server.start()
        root = Creds(base.ACCESS_KEY, base.SECRET_KEY)
        t = server.tables_url
        # A table through the Iceberg REST catalog (vended credentials need one with metadata).
        name = f"authz-{int(time.time())}"
        arn = json.loads(call(t, root, "PUT", "/buckets", json.dumps({"name": name}).encode()))["arn"]
        prefix = f"111122223333.{name}"
        call(t, root, "POST", f"/iceberg/v1/{prefix}/namespaces", json.dumps({"namespace": ["b"]}).encode(),
             service="osstables")
        schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "a", "type": "int", "required": False}]}
        created = json.loads(call(t, root, "POST", f"/iceberg/v1/{prefix}/namespaces/b/tables",
                                  json.dumps({"name": "t", "schema": schema}).encode(), service="osstables"))
        bucket = created["metadata"]["location"].removeprefix("s3://").split("/")[0]
        # A user with an identity policy, its STS session, and vended credentials.
        call(t, root, "POST", "/admin/users", json.dumps({"userName": "bench"}).encode())
        key = json.loads(call(t, root, "POST", "/admin/users/bench/access-keys"))
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
                  "Action": ["s3tables:GetTableData", "s3tables:PutTableData", "s3tables:GetTableMetadataLocation"],
                  "Resource": f"{arn}/*"}]}
        call(t, root, "PUT", "/admin/users/bench/policies/data", json.dumps(policy).encode())
        user = Creds(key["accessKeyId"], key["secretAccessKey"])
        form = urlencode({"Action": "GetSessionToken", "Version": "2011-06-15"}).encode()
        xml = ET.fromstring(call(t, user, "POST", "/sts", form, service="sts",
                                 content_type="application/x-www-form-urlencoded"))
        ns = {"s": "https://sts.amazonaws.com/doc/2011-06-15/"}
        c = xml.find(".//s:Credentials", ns)
        session = Creds(c.find("s:AccessKeyId", ns).text, c.find("s:SecretAccessKey", ns).text,
                        c.find("s:SessionToken", ns).text)
        loaded = json.loads(call(t, user, "GET", f"/iceberg/v1/{prefix}/namespaces/b/tables/t", service="osstables",
                                 extra={"x-iceberg-access-delegation": "vended-credentials"}))
        cfg = loaded["config"]
        vended = Creds(cfg["s3.access-key-id"], cfg["s3.secret-access-key"], cfg["s3.session-token"])

        rows = []
        for label, creds in [("instance root", root), ("user + identity policy", user),
                             ("user's STS session", session), ("vended (table-scoped)", vended)]:
            for clients in (1, 8):
                put, get = measure(server.s3_url, creds, bucket, label.split()[0], clients, args.seconds)
                rows.append((label, clients, put, get))
                print(f"  {label:<24} {clients:>2} clients: PUT {put:8.0f}/s  GET {get:8.0f}/s", flush=True)
        print()
        print(f"{'credentials':<24} {'clients':>7} {'4 KiB PUT/s':>12} {'4 KiB GET/s':>12} {'PUT vs root':>12}")
        base_put = {c: p for (l, c, p, _) in rows if l == "instance root"}
        for label, clients, put, get in rows:
            print(f"{label:<24} {clients:>7} {put:>12.0f} {get:>12.0f} {put / base_put[clients]:>11.0%}")
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
