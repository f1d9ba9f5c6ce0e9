"""Runs the real `aws` CLI (v1, from the suite's venv) against a test server.

The CLI gets only what a user would set for a custom endpoint: `AWS_ACCESS_KEY_ID`,
`AWS_SECRET_ACCESS_KEY`, `AWS_DEFAULT_REGION`, `--endpoint-url`, `--output json`. `HOME`, the config
and the credentials file point at an empty temporary directory, so nothing from the developer's
`~/.aws` is used, and retries are off so a server error shows as one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from . import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY


def aws_executable() -> str:
    """`TABLEBAY_AWS_CLI`, else the `aws` next to this Python (the venv's), else the one on PATH."""
    explicit = os.environ.get("TABLEBAY_AWS_CLI")
    if explicit:
        return explicit
    beside = Path(sys.executable).parent / "aws"
    if beside.is_file():
        return str(beside)
    found = shutil.which("aws")
    if not found:
        raise RuntimeError("aws CLI not found: run scripts/python-env.sh and use its venv")
    return found


@dataclass
class CliResult:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self):
        return json.loads(self.stdout) if self.stdout.strip() else None


class AwsCli:
    def __init__(self, endpoint_url: str, home: Path, access_key: str = ACCESS_KEY_ID,
                 secret_key: str = SECRET_ACCESS_KEY):
        self.endpoint_url = endpoint_url
        self.home = Path(home)
        self.home.mkdir(parents=True, exist_ok=True)
        for name in ("config", "credentials"):
            (self.home / name).write_text("")
        self.access_key = access_key
        self.secret_key = secret_key

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            HOME=str(self.home),
            AWS_ACCESS_KEY_ID=self.access_key,
            AWS_SECRET_ACCESS_KEY=self.secret_key,
            AWS_DEFAULT_REGION=REGION,
            AWS_CONFIG_FILE=str(self.home / "config"),
            AWS_SHARED_CREDENTIALS_FILE=str(self.home / "credentials"),
            AWS_EC2_METADATA_DISABLED="true",
            AWS_MAX_ATTEMPTS="1",
            AWS_RETRY_MODE="standard",
            AWS_PAGER="",
        )
        return env

    def run(self, *args: str, check: bool = True, timeout: float = 120) -> CliResult:
        """`aws s3tables <args…> --endpoint-url … --output json`; with `check`, a non-zero exit fails."""
        cmd = [aws_executable(), "s3tables", *args, "--endpoint-url", self.endpoint_url, "--output", "json"]
        proc = subprocess.run(cmd, env=self.environment(), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
        result = CliResult(cmd, proc.returncode, proc.stdout, proc.stderr)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"aws {' '.join(args)} exited {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
        return result

    def __call__(self, *args: str):
        """Runs and returns the parsed JSON output (None for operations with an empty answer)."""
        return self.run(*args).json
