"""boto3 `s3tables` clients for a test server: explicit credentials and region, no retries (a server
error must show as one), bounded timeouts."""

from __future__ import annotations

import boto3
from botocore.config import Config

from . import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY


def make_client(endpoint_url: str, access_key: str = ACCESS_KEY_ID, secret_key: str = SECRET_ACCESS_KEY,
                region: str = REGION, **config):
    session = boto3.session.Session(aws_access_key_id=access_key, aws_secret_access_key=secret_key,
                                    region_name=region)
    cfg = Config(retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=10, read_timeout=60, **config)
    return session.client("s3tables", endpoint_url=endpoint_url, config=cfg)
