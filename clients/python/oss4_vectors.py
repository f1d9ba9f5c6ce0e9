"""Known-answer vectors for OSS V4 (`OSS4-HMAC-SHA256`, product `osstables`), produced by Alibaba's own Python SDK.

Each vector is one request of `alibabacloud-oss-v2` 1.4.1's Tables client, signed by the SDK's `TablesSignerV4`
(wrapped only to fix the clock and record the canonical request and string to sign, see tablebay_test/oss.py)
and caught by a requests transport adapter just before it would go on the wire. Nothing here re-implements the
signature: the Rust verifier's tests (crates/tablebay-auth/tests/fixtures/oss4_vectors.json) check themselves
against what the SDK really sends.

    python clients/python/oss4_vectors.py            # writes the fixture
    python clients/python/oss4_vectors.py --check    # exits 1 if the fixture differs from a fresh run

test_ossutil_sdk.py runs the check too. The vectors are deterministic: fixed keys, a fixed time, and a pinned
User-Agent (the SDK's default names the platform and Python version; it is never signed here).
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import io
import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

import requests
from requests.structures import CaseInsensitiveDict
from alibabacloud_oss_v2.transport import RequestsHttpClient

from tablebay_test.oss import (
    GUIDE_COMPACTION, GUIDE_FILE_REMOVAL, GUIDE_SCHEMA, PRODUCT, SdkSigner, models, table_metadata, tables_client,
)

FIXTURE = Path(__file__).resolve().parents[2] / "crates/tablebay-auth/tests/fixtures/oss4_vectors.json"

ACCESS_KEY_ID = "LTAI5tTablebayExample"
SECRET = "TablebayExampleSecret0123456789abcdefgh"
SECURITY_TOKEN = "CAIS+token/with=chars&more"  # STS tokens are base64-ish: `+`, `/`, `=` must survive encoding
TIME = dt.datetime(2026, 6, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
REGION = "cn-hangzhou"
ACCOUNT = "1142323451804027"
BUCKET = "guide-bucket"
BUCKET_ARN = f"acs:osstables:{REGION}:{ACCOUNT}:bucket/{BUCKET}"
TABLE_ARN = f"{BUCKET_ARN}/table/0f6c3b1e-7d9a-4c2b-9e8f-1a2b3c4d5e6f"
NAMESPACE = "kafka_ns"
TABLE = "events"
USER_AGENT = "alibabacloud-python-sdk-v2/1.4.1/tables-client"

# No endpoint: the SDK's default for the region, virtual-hosted. An IP endpoint forces path style.
DEFAULT_ENDPOINT = None
IP_ENDPOINT = "http://127.0.0.1:8181"

POLICY = json.dumps({"Version": "1", "Statement": [{"Effect": "Allow", "Action": ["oss:GetTable"],
                                                   "Principal": ["*"], "Resource": [f"{BUCKET_ARN}/*"]}]})


class CaptureAdapter(requests.adapters.BaseAdapter):
    """A requests adapter that keeps each prepared request (exactly what would be written) and answers 200 `{}`."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request, **kwargs) -> requests.Response:
        self.sent.append(request)
        resp = requests.Response()
        resp.status_code, resp.reason, resp.url, resp.request = 200, "OK", request.url, request
        resp.headers = CaseInsensitiveDict({"Content-Type": "application/json",
                                            "Date": "Mon, 01 Jun 2026 12:00:00 GMT"})
        resp.raw = io.BytesIO(b"{}")
        return resp

    def close(self) -> None:
        pass


def B(**kw):
    """Keyword arguments naming the vectors' bucket."""
    return {"table_bucket_arn": BUCKET_ARN, **kw}


def T(**kw):
    """Keyword arguments naming the vectors' table."""
    return B(namespace=NAMESPACE, name=TABLE, **kw)


# (name, what it shows, client options, signer options, SDK method, request, call options)
CASES = [
    ("create_table_bucket", "CreateTableBucket: no bucket, so the plain endpoint host and the "
     "`/acs:osstables:<region>::bucket//<key>` canonical URI; JSON body with Content-MD5",
     {}, {}, "create_table_bucket", models.CreateTableBucketRequest(name=BUCKET), {}),
    ("create_table_bucket_ip_endpoint", "CreateTableBucket to an IP endpoint (path style, host with port)",
     {"endpoint": IP_ENDPOINT}, {}, "create_table_bucket", models.CreateTableBucketRequest(name=BUCKET), {}),
    ("list_table_buckets_query", "ListTableBuckets with every query parameter; the token needs encoding "
     "(space, /, +, =, &, ~, :)",
     {}, {}, "list_table_buckets",
     models.ListTableBucketsRequest(prefix="guide", max_buckets=10, continuation_token="a b/c+d=e&f~g:h"), {}),
    ("get_table_bucket_virtual_hosted", "GetTableBucket, the SDK's default virtual-hosted style: "
     "`<bucket>-<account>.<endpoint host>`, ARN in the path too",
     {}, {}, "get_table_bucket", models.GetTableBucketRequest(**B()), {}),
    ("get_table_bucket_path_style", "GetTableBucket with use_path_style: same canonical request, plain host",
     {"path_style": True}, {}, "get_table_bucket", models.GetTableBucketRequest(**B()), {}),
    ("create_namespace", "CreateNamespace (the guide's second command)",
     {}, {}, "create_namespace", models.CreateNamespaceRequest(**B(namespace=[NAMESPACE])), {}),
    ("list_namespaces_query", "ListNamespaces with prefix, maxNamespaces and a continuation token",
     {"endpoint": IP_ENDPOINT}, {}, "list_namespaces",
     models.ListNamespacesRequest(**B(prefix="kaf", max_namespaces=2, continuation_token="tok/1==")), {}),
    ("create_table_guide_schema", "CreateTable with the guide's schema.json: the SDK also sends "
     "`?namespace=<ns>` next to the namespace in the path",
     {}, {}, "create_table",
     models.CreateTableRequest(**B(namespace=NAMESPACE, name=TABLE, format="ICEBERG",
                                   metadata=table_metadata(GUIDE_SCHEMA))), {}),
    ("get_table_by_name", "GetTable by bucket ARN, namespace and name: `GET /get-table?…`, bucket from the query",
     {}, {}, "get_table", models.GetTableRequest(**T()), {}),
    ("get_table_by_table_arn", "GetTable by table ARN only: the SDK signs with the bucket part of the table ARN",
     {}, {}, "get_table", models.GetTableRequest(table_arn=TABLE_ARN), {}),
    ("list_tables", "ListTables (namespace in the query)",
     {"endpoint": IP_ENDPOINT}, {}, "list_tables",
     models.ListTablesRequest(**B(namespace=NAMESPACE, max_tables=1)), {}),
    ("put_table_maintenance_compaction", "PutTableMaintenanceConfiguration, the guide's icebergCompaction 256",
     {}, {}, "put_table_maintenance_configuration",
     models.PutTableMaintenanceConfigurationRequest(**T(type="icebergCompaction", value=GUIDE_COMPACTION)), {}),
    ("put_table_bucket_maintenance_file_removal", "PutTableBucketMaintenanceConfiguration, the guide's "
     "icebergUnreferencedFileRemoval 4/10",
     {"endpoint": IP_ENDPOINT}, {}, "put_table_bucket_maintenance_configuration",
     models.PutTableBucketMaintenanceConfigurationRequest(**B(type="icebergUnreferencedFileRemoval",
                                                              value=GUIDE_FILE_REMOVAL)), {}),
    ("get_table_maintenance_job_status_table_arn_header", "GetTableMaintenanceJobStatus with the optional "
     "x-oss-table-arn header (signed: every x-oss-* header is)",
     {}, {}, "get_table_maintenance_job_status",
     models.GetTableMaintenanceJobStatusRequest(**T(table_arn=TABLE_ARN)), {}),
    ("rename_table", "RenameTable with a version token in the body",
     {}, {}, "rename_table",
     models.RenameTableRequest(**T(new_namespace_name="archive", new_name="events_v1", version_token="vt1")), {}),
    ("update_table_metadata_location", "UpdateTableMetadataLocation",
     {}, {}, "update_table_metadata_location",
     models.UpdateTableMetadataLocationRequest(**T(
         version_token="vt1",
         metadata_location="s3://0f6c3b1e--table-s3/metadata/00001-x.metadata.json")), {}),
    ("delete_table_version_token", "DeleteTable with versionToken in the query",
     {}, {}, "delete_table", models.DeleteTableRequest(**T(version_token="vt1")), {}),
    ("put_table_bucket_policy", "PutTableBucketPolicy: the policy is a JSON string inside the JSON body",
     {}, {}, "put_table_bucket_policy", models.PutTableBucketPolicyRequest(**B(resource_policy=POLICY)), {}),
    ("security_token_header", "temporary credentials: x-oss-security-token is sent and signed",
     {"token": SECURITY_TOKEN}, {}, "list_table_buckets", models.ListTableBucketsRequest(), {}),
    ("additional_headers", "AdditionalHeaders: asked for cache-control, x-tablebay-trace, host and "
     "content-type; host is not among the request's headers (the transport adds it) and content-type is signed "
     "anyway, so both are dropped from the list",
     {}, {"additional_headers": ["Cache-Control", "X-Tablebay-Trace", "Host", "Content-Type"]},
     "get_namespace",
     models.GetNamespaceRequest(**B(namespace=NAMESPACE),
                                headers={"Cache-Control": "no-cache", "X-Tablebay-Trace": "vector 20"}), {}),
    ("presigned_get_table_bucket", "the query form (auth_method='query'), 15 minutes; Content-Type and "
     "Content-MD5 are still sent and signed",
     {}, {"expires": 900}, "get_table_bucket", models.GetTableBucketRequest(**B()), {"auth_method": "query"}),
    ("presigned_list_table_buckets_token", "the query form with query parameters and a security token, one hour",
     {"endpoint": IP_ENDPOINT, "token": SECURITY_TOKEN}, {"expires": 3600}, "list_table_buckets",
     models.ListTableBucketsRequest(prefix="guide", max_buckets=5), {"auth_method": "query"}),
    ("presigned_additional_headers", "the query form with x-oss-additional-headers",
     {}, {"expires": 600, "additional_headers": ["X-Tablebay-Trace"]}, "get_namespace",
     models.GetNamespaceRequest(**B(namespace=NAMESPACE), headers={"X-Tablebay-Trace": "presigned"}),
     {"auth_method": "query"}),
]


def _body(prepared: requests.PreparedRequest) -> tuple[str | None, str | None]:
    raw = prepared.body
    if raw is None or raw == b"":
        return None, None
    if isinstance(raw, str):
        raw = raw.encode()
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(raw).decode(), "base64"


def signed_bucket(request) -> str | None:
    """The bucket ARN the SDK signs with (its `op_input.bucket`), for the verifier's benefit."""
    if isinstance(request, models.GetTableRequest) and request.table_bucket_arn is None and request.table_arn:
        return request.table_arn[:request.table_arn.index("/table/")]
    return getattr(request, "table_bucket_arn", None)


def vector(name, about, client_opts, signer_opts, method, request, call_opts) -> dict:
    capture = CaptureAdapter()
    opts = {"endpoint": DEFAULT_ENDPOINT, **client_opts}
    signer = SdkSigner(at=TIME, **signer_opts)
    client = tables_client(opts.pop("endpoint"), region=REGION, access_key=ACCESS_KEY_ID, secret_key=SECRET,
                           signer=signer, http_client=RequestsHttpClient(adapter=capture), **opts)
    client._client._inner.user_agent = USER_AGENT  # noqa: SLF001 (pins the platform-dependent default)
    getattr(client, method)(request, **call_opts)
    (sent,) = capture.sent
    url = urlsplit(sent.url)
    # urllib3 writes Host from the URL (host[:port], default ports omitted); requests never holds it.
    headers = {"Host": url.netloc, **dict(sent.headers)}
    body, body_encoding = _body(sent)
    query_form = call_opts.get("auth_method") == "query"
    if query_form:
        signature = dict(p.split("=", 1) for p in url.query.split("&"))["x-oss-signature"]
    else:
        signature = headers["Authorization"].rsplit("Signature=", 1)[1]
    return {
        "name": name,
        "description": about,
        "operation": method,
        "auth": "query" if query_form else "header",
        "addressing": "path" if url.hostname in ("127.0.0.1",) or opts.get("path_style") else "virtual",
        "method": sent.method,
        "url": sent.url,
        "host": url.netloc,
        "path": url.path,
        "query": url.query,
        "headers": headers,
        "body": body,
        "body_encoding": body_encoding,
        "access_key_id": ACCESS_KEY_ID,
        "secret": SECRET,
        "security_token": opts.get("token"),
        "region": REGION,
        "product": PRODUCT,
        "time": TIME.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "expires": signer_opts.get("expires"),
        "signed_bucket_arn": signed_bucket(request),
        "canonical_request": signer.canonical_request,
        "string_to_sign": signer.string_to_sign,
        "signature": signature,
    }


def generate() -> dict:
    return {
        "about": "OSS V4 (OSS4-HMAC-SHA256, product osstables) requests as alibabacloud-oss-v2 1.4.1's Tables client "
                 "sends them, signed by the SDK's own TablesSignerV4; generated by clients/python/oss4_vectors.py. "
                 "`headers` is everything the request carries (Host as urllib3 writes it). `canonical_request` and "
                 "`string_to_sign` are the signer's own intermediate values.",
        "sdk": "alibabacloud-oss-v2==1.4.1",
        "vectors": [vector(*case) for case in CASES],
    }


def render() -> str:
    return json.dumps(generate(), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the fixture instead of writing it")
    args = parser.parse_args()
    text = render()
    if args.check:
        same = FIXTURE.is_file() and FIXTURE.read_text() == text
        print(f"{FIXTURE}: {'up to date' if same else 'DIFFERS from a fresh run'}")
        return 0 if same else 1
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(text)
    print(f"wrote {len(CASES)} vectors to {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
