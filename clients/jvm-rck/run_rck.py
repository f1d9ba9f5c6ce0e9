"""Runs Iceberg's REST Compatibility Kit against a fresh `tablebay serve` and reports every test.

Started by scripts/rck.sh (which builds the class path of the chosen Iceberg version with Maven first). Steps:
1. start the binary on ephemeral ports (the Python suite's `TablebayServer`, `--arn-flavor aws`);
2. create a table bucket through the control plane (boto3 `s3tables`): its ARN is the warehouse;
3. run the JUnit console launcher on `--lib` (`target/<version>/lib/*`) with `rck.local=false` and the catalog properties below
   (SigV4 signing name `osstables`, S3FileIO on Tablebay's S3 endpoint through ResolvingFileIO), bounded by a
   wall-clock limit;
4. read the JUnit XML report and print one line per test, the reason of every test that did not pass, and a
   summary; the same goes to `--out` (`target/<version>`)`/rck-report.md`.

Exit status: 0 when every test passed or was skipped by the kit itself, 1 otherwise, 2 if it could not run.
With `--expected-failures FILE` (scripts/test.sh uses clients/jvm-rck/expected-failures-<version>.txt), failures listed
there with their reason are accepted: the exit status is 1 only for a failure that is not listed, and listed
tests that now pass are printed so that the list can shrink (except those whose reason says `[flaky]`).

    python clients/jvm-rck/run_rck.py --iceberg-version V --lib DIR --out DIR [--only catalog|views]
                                      [--timeout SECONDS] [--expected-failures FILE] [-- extra launcher args]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY  # noqa: E402
from tablebay_test.clients import make_client  # noqa: E402
from tablebay_test.server import TablebayServer  # noqa: E402

CLASSES = {
    "catalog": "org.apache.iceberg.rest.RESTCompatibilityKitCatalogTests",
    "views": "org.apache.iceberg.rest.RESTCompatibilityKitViewCatalogTests",
}


# The kit's default FileIO: `s3://` goes to S3FileIO (with the s3.* properties below), `file:` to Hadoop's local
# FileSystem. The replace-transaction tests request `file:/tmp/…` locations and write a manifest there before
# committing; the server ignores the requested location, but a bare S3FileIO could not write that manifest.
RESOLVING_FILE_IO = "org.apache.iceberg.io.ResolvingFileIO"


def catalog_properties(server: TablebayServer, warehouse: str, signing_name: str,
                       io_impl: str = RESOLVING_FILE_IO) -> dict[str, str]:
    """What RCKUtils.initCatalogClient gets (it turns every JVM system property into a catalog property)."""
    return {
        "uri": f"{server.tables_url}/iceberg",
        "warehouse": warehouse,
        "rest.auth.type": "sigv4",
        "rest.signing-name": signing_name,
        "rest.signing-region": REGION,
        "rest.access-key-id": ACCESS_KEY_ID,
        "rest.secret-access-key": SECRET_ACCESS_KEY,
        "io-impl": io_impl,
        "s3.endpoint": server.s3_url,
        "s3.path-style-access": "true",
        "s3.access-key-id": ACCESS_KEY_ID,
        "s3.secret-access-key": SECRET_ACCESS_KEY,
        "client.region": REGION,
        # The kit's switches (reference/iceberg-rest.md §8): namespaces must be created before use; the
        # server rebases commits whose requirements still hold; like S3 Tables it assigns every table's
        # location (`s3://<uuid>--table-s3`), so a requested location is overridden.
        "rck.requires-namespace-create": "true",
        "rck.supports-serverside-retry": "true",
        "rck.overrides-requested-location": "true",
    }


def run_launcher(lib: Path, props: dict[str, str], classes: list[str], reports: Path, timeout: float,
                 extra: list[str], log_path: Path) -> int:
    cmd = ["java", "-Xmx1g", "-Daws.region=" + REGION]
    cmd += [f"-D{k}={v}" for k, v in props.items()]
    cmd += ["-cp", f"{lib}/*", "org.junit.platform.console.ConsoleLauncher", "execute",
            "--disable-banner", "--disable-ansi-colors", "--details=tree",
            "--config", "rck.local=false",
            # One hung request must not eat the run: every test and lifecycle method gets a deadline.
            "--config", "junit.jupiter.execution.timeout.default=90 s",
            "--reports-dir", str(reports)]
    for cls in classes:
        cmd += ["--select-class", cls]
    cmd += extra
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CATALOG_"))}
    env["AWS_REGION"] = REGION
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    empty = Path(tempfile.mkdtemp(prefix="rck-aws-"))
    for name in ("config", "credentials"):
        (empty / name).write_text("")
    env["AWS_CONFIG_FILE"] = str(empty / "config")
    env["AWS_SHARED_CREDENTIALS_FILE"] = str(empty / "credentials")
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return -9


def first_line(text: str | None, limit: int = 300) -> str:
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line[:limit]
    return ""


def read_expected(path: Path | None) -> dict[str, str]:
    """`Class.test(): reason` lines (`#` comments, blank lines ignored) → {`Class.test()`: reason}."""
    expected: dict[str, str] = {}
    if path is None:
        return expected
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, reason = line.removeprefix("- ").partition(": ")
        expected[key.strip()] = reason.strip()
    return expected


def read_report(reports: Path) -> list[dict]:
    """(class, test, outcome, reason) for each <testcase> of the legacy JUnit XML report; a name seen twice
    (a parameterized test) gets ` #2`, ` #3`, … appended."""
    results = []
    seen: dict[str, int] = {}
    for xml in sorted(reports.glob("TEST-*.xml")):
        for case in ET.parse(xml).getroot().iter("testcase"):
            cls = case.get("classname", "").rsplit(".", 1)[-1]
            outcome, reason = "passed", ""
            for tag in ("failure", "error"):
                node = case.find(tag)
                if node is not None:
                    outcome = "FAILED"
                    reason = first_line(node.get("message")) or first_line(node.text)
                    detail = first_line(node.get("type"))
                    if detail and detail not in reason:
                        reason = f"{detail}: {reason}"
            skipped = case.find("skipped")
            if skipped is not None:
                outcome = "skipped"
                reason = first_line(skipped.get("message")) or first_line(skipped.text)
            name = case.get("name", "")
            seen[f"{cls}.{name}"] = seen.get(f"{cls}.{name}", 0) + 1
            if seen[f"{cls}.{name}"] > 1:
                name = f"{name} #{seen[f'{cls}.{name}']}"
            results.append({"class": cls, "test": name, "outcome": outcome, "reason": reason,
                            "seconds": float(case.get("time", "0") or 0)})
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=sorted(CLASSES), action="append",
                        help="run only these test classes (default: both)")
    parser.add_argument("--timeout", type=float, default=540.0, help="wall-clock limit of the JVM (s)")
    parser.add_argument("--signing-name", default="osstables")
    parser.add_argument("--io-impl", default=RESOLVING_FILE_IO,
                        help="the client's FileIO (default ResolvingFileIO: S3FileIO for s3://, Hadoop for file:; "
                             "org.apache.iceberg.aws.s3.S3FileIO for S3 only)")
    parser.add_argument("--iceberg-version", required=True, help="the kit's Iceberg release (for the report)")
    parser.add_argument("--lib", type=Path, required=True, help="the class path: the kit's jars")
    parser.add_argument("--out", type=Path, required=True, help="where the report and the console log go")
    parser.add_argument("--expected-failures", type=Path, default=None,
                        help="accept the failures listed in this file (`Class.test(): reason` lines)")
    parser.add_argument("extra", nargs="*", help="more console launcher arguments (after --)")
    args = parser.parse_args()

    if not any(args.lib.glob("iceberg-open-api-*-tests.jar")):
        print(f"rck: no RCK jars in {args.lib}; run scripts/rck.sh (mvn dependency:copy-dependencies)",
              file=sys.stderr)
        return 2
    classes = [CLASSES[c] for c in (args.only or ["catalog", "views"])]
    args.out.mkdir(parents=True, exist_ok=True)
    reports = Path(tempfile.mkdtemp(prefix="rck-reports-", dir=args.out))
    work = Path(tempfile.mkdtemp(prefix="rck-server-"))

    server = TablebayServer(work, arn_flavor="aws")
    server.start()
    try:
        s3tables = make_client(server.tables_url)
        warehouse = s3tables.create_table_bucket(name=f"rck-{int(time.time())}")["arn"]
        props = catalog_properties(server, warehouse, args.signing_name, args.io_impl)
        print(f"rck: server {server.tables_url} (s3 {server.s3_url}), warehouse {warehouse}")
        print(f"rck: Iceberg {args.iceberg_version} kit, running {', '.join(c.rsplit('.', 1)[-1] for c in classes)} (limit {args.timeout:.0f} s)")
        started = time.monotonic()
        log_path = args.out / "rck-console.log"
        rc = run_launcher(args.lib, props, classes, reports, args.timeout, args.extra, log_path)
        elapsed = time.monotonic() - started
    finally:
        server.stop()

    results = read_report(reports)
    if rc == -9:
        print(f"rck: the JVM hit the {args.timeout:.0f} s limit and was killed; results so far follow")
    if not results:
        print(f"rck: no test report (launcher exit {rc}); see {log_path}")
        print(Path(log_path).read_text(errors="replace")[-4000:])
        return 2

    lines = []
    for r in results:
        lines.append(f"{r['outcome']:8} {r['class']}.{r['test']}  ({r['seconds']:.1f}s)"
                     + (f"  -- {r['reason']}" if r["outcome"] != "passed" else ""))
    failed = [r for r in results if r["outcome"] == "FAILED"]
    counts = {o: sum(1 for r in results if r["outcome"] == o) for o in ("passed", "FAILED", "skipped")}
    summary = (f"RCK {args.iceberg_version}: {counts['passed']} passed, {counts['FAILED']} failed, {counts['skipped']} skipped "
               f"of {len(results)} in {elapsed:.0f}s (launcher exit {rc})")
    print("\n".join(lines))
    print("\nTests that did not pass:")
    for r in failed:
        print(f"- {r['class']}.{r['test']}: {r['reason']}")
    print("\n" + summary)
    # The plain closing line CI reads ("N passed, N failed").
    print(f"{counts['passed']} passed, {counts['FAILED']} failed, {counts['skipped']} skipped")

    report = args.out / "rck-report.md"
    with open(report, "w", encoding="utf-8") as f:
        f.write(f"# RCK (Iceberg {args.iceberg_version}) run against Tablebay\n\n{summary}\n\nSigning name `{args.signing_name}`, "
                f"Iceberg jars from {args.lib}.\n\n## Did not pass\n\n")
        for r in failed:
            f.write(f"- `{r['class']}.{r['test']}`: {r['reason']}\n")
        f.write("\n## All\n\n```\n" + "\n".join(lines) + "\n```\n")
    print(f"rck: report in {report}, console log in {log_path}")
    if args.expected_failures is None:
        return 0 if not failed and rc == 0 else 1

    expected = read_expected(args.expected_failures)
    failed_keys = {f"{r['class']}.{r['test']}" for r in failed}
    passed_keys = {f"{r['class']}.{r['test']}" for r in results if r["outcome"] == "passed"}
    unexpected = sorted(failed_keys - expected.keys())
    # An entry marked [flaky] fails only sometimes: passing is no reason to drop it.
    fixed = sorted(k for k in passed_keys & expected.keys() if "[flaky]" not in expected[k])
    if fixed:
        print(f"\nrck: {len(fixed)} test(s) listed in {args.expected_failures} now pass; remove them:")
        for key in fixed:
            print(f"  {key}")
    if unexpected:
        print(f"\nrck: {len(unexpected)} failure(s) not listed in {args.expected_failures}:")
        for key in unexpected:
            print(f"  {key}")
        return 1
    if rc not in (0, 1):
        print(f"rck: the launcher exited {rc}")
        return 1
    print(f"rck: every failure is a listed, known one ({len(failed_keys)} of {len(expected)} listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
