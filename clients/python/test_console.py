"""The web console (issue 18) in a real browser: Debian's chromium, headless, driven by Selenium through
chromium-driver (scripts/browser.sh installs both), against the real binary.

The scenario: sign in; create a bucket, a namespace and a table in the console; append rows with PyIceberg;
see them in the preview and the snapshots on the chart; run compaction now and see its run, with the chart's
file count going down; the policy editor refuses a bad document with its line and column; a read-only user
sees no mutating control, and a forged post gets 403 and changes nothing; the XSS probe stays text; sign out.
Every page is saved as a screenshot under the artifacts directory (`TABLEBAY_TEST_ARTIFACTS`, default
`test-artifacts/console` at the repository root), at 1280 px and some at 390 px.

Chromium runs with a fresh profile and everything that would reach the network switched off.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pytest
import requests

from tablebay_test import ACCESS_KEY_ID, SECRET_ACCESS_KEY
from tablebay_test.clients import make_client
from tablebay_test.expect import unique
from tablebay_test.iceberg import rest_catalog
from tablebay_test.server import TablebayServer

# Selenium Manager must never try to fetch a driver or a browser: both are given.
os.environ["SE_OFFLINE"] = "true"

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    NoAlertPresentException, TimeoutException, WebDriverException)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

XSS = "<script>alert(1)</script>"
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("TABLEBAY_TEST_ARTIFACTS") or REPO / "test-artifacts" / "console")
CHROME_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--disable-extensions", "--disable-default-apps",
                "--no-default-browser-check", "--metrics-recording-only", "--disable-breakpad")
READ_ONLY_POLICY = ('{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", '
                    '"Action": ["s3tables:Get*", "s3tables:List*"], "Resource": "*"}]}')
BAD_POLICY = ('{\n  "Version": "2012-10-17",\n  "Statement": [\n    {"Effect": "Allow", "Principal": "*",\n'
              '     "Action": "s3tables:GetTabel", "Resource": "*"}\n  ]\n}')


def _binary(name: str, *candidates: str) -> str:
    for candidate in (shutil.which(name), *candidates):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.fail(f"{name} is missing: run scripts/browser.sh (Debian's chromium and chromium-driver)")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The console's server; its maintenance workers are off, so only "run now" compacts."""
    srv = TablebayServer(tmp_path_factory.mktemp("tablebay-console"), arn_flavor="aws",
                         extra_args=("--maintenance-workers", "0", "--maintenance-sweep-seconds", "0"))
    srv.start()
    yield srv
    srv.stop()


def _new_driver():
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium", "/usr/bin/chromium")
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='tablebay-chromium-')}")
    options.add_argument("--window-size=1280,900")
    service = Service(executable_path=_binary("chromedriver", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(60)
    return driver


@pytest.fixture(scope="module")
def browser():
    driver = _new_driver()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


class Console:
    """The browser on one server's console, with helpers that say what a person does."""

    def __init__(self, driver, server):
        self.d = driver
        self.base = server.tables_url

    def go(self, path: str) -> None:
        self.d.get(self.base + path)

    def path(self) -> str:
        return self.d.current_url.removeprefix(self.base)

    def one(self, css: str):
        return self.d.find_element(By.CSS_SELECTOR, css)

    def all(self, css: str):
        return self.d.find_elements(By.CSS_SELECTOR, css)

    def fill(self, css: str, text: str) -> None:
        field = self.one(css)
        field.clear()
        field.send_keys(text)

    def submit(self, css: str) -> None:
        """Clicks a submit button, accepting the confirmation a deletion asks for, and waits for the answer's page:
        a click returns before the browser has loaded it, so reading the URL at once could see the old page."""
        # Each document has its own time origin: a new one, fully loaded, is the answer's page.
        origin = self.d.execute_script("return performance.timeOrigin")
        self.one(css).click()

        def answered(driver) -> bool:
            try:  # the confirmation may open a moment after the click
                driver.switch_to.alert.accept()
                return False
            except NoAlertPresentException:
                pass
            try:
                now = driver.execute_script(
                    "return document.readyState === 'complete' ? performance.timeOrigin : null")
            except WebDriverException:  # between documents
                return False
            return now is not None and now != origin

        try:
            WebDriverWait(self.d, 15).until(answered)
        except TimeoutException:
            pass  # a form the browser did not send (its own validation refused it): the page stays

    def sign_in(self, key: str, secret: str) -> None:
        self.go("/console/login")
        self.fill("#access_key_id", key)
        self.fill("#secret_access_key", secret)
        self.submit("form[action='/console/login'] button[type=submit]")

    def sign_out(self) -> None:
        self.submit("form[action='/console/logout'] button")

    def shot(self, name: str, width: int = 1280) -> Path:
        """A screenshot of the whole page at `width` px."""
        self.d.set_window_size(width, 900)
        height = self.d.execute_script("return document.documentElement.scrollHeight")
        self.d.set_window_size(width, min(max(int(height) + 140, 600), 6000))
        path = ARTIFACTS / f"{name}-{width}.png"
        self.d.save_screenshot(str(path))
        self.d.set_window_size(1280, 900)
        assert path.stat().st_size > 5000, f"{path} looks empty"
        return path

    def no_alert(self) -> None:
        with pytest.raises(NoAlertPresentException):
            _ = self.d.switch_to.alert.text

    def every_control_labelled(self) -> None:
        unlabelled = self.d.execute_script(
            "return Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea'))"
            ".filter(e => e.labels.length === 0).map(e => e.name || e.id)")
        assert unlabelled == [], f"controls without a label on {self.path()}: {unlabelled}"
        nameless = self.d.execute_script(
            "return Array.from(document.querySelectorAll('button'))"
            ".filter(b => !(b.textContent.trim() || b.getAttribute('aria-label'))).length")
        assert nameless == 0

    def post_forms(self) -> list[str]:
        """The actions of the page's state-changing forms (sign-out aside)."""
        return [f.get_attribute("action").removeprefix(self.base)
                for f in self.all("form[method=post]")
                if not f.get_attribute("action").endswith("/console/logout")]

    def session_cookie(self) -> str:
        return next(c["value"] for c in self.d.get_cookies() if c["name"] == "tablebay_console")


def arrow_rows(start: int, count: int) -> pa.Table:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("item", pa.string()),
                        pa.field(XSS, pa.string())])
    return pa.table({"id": list(range(start, start + count)),
                     "item": [f"item-{i}" for i in range(start, start + count)],
                     XSS: [XSS] * count}, schema=schema)


def test_sign_in_refuses_bad_credentials_and_pages_need_a_session(server, browser):
    resp = requests.get(server.tables_url + "/console/", allow_redirects=False, timeout=10)
    assert resp.status_code == 303 and resp.headers["location"] == "/console/login"
    resp = requests.post(server.tables_url + "/console/login", timeout=10,
                         data={"access_key_id": ACCESS_KEY_ID, "secret_access_key": "not-the-secret"})
    assert resp.status_code == 401
    assert 'name="access_key_id"' in resp.text and "not valid" in resp.text
    assert "not-the-secret" not in resp.text
    csp = resp.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp and "script-src 'self'" in csp
    console = Console(browser, server)
    console.sign_in(ACCESS_KEY_ID, "wrong secret")
    assert "not valid" in console.one("p.error").text
    assert console.d.title.startswith("Sign in")
    console.every_control_labelled()
    console.shot("01-sign-in-refused")


def test_console_scenario(server, browser):
    console = Console(browser, server)
    d = browser

    # Sign in: the bucket list.
    console.sign_in(ACCESS_KEY_ID, SECRET_ACCESS_KEY)
    assert console.path() == "/console/buckets"
    assert d.title.startswith("Table buckets")
    cookie = next(c for c in d.get_cookies() if c["name"] == "tablebay_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    console.every_control_labelled()

    # Keyboard: the skip link comes first, and the create form is reachable with Tab alone.
    body = console.one("body")
    body.send_keys(Keys.TAB)
    assert d.switch_to.active_element.text == "Skip to content"
    reached = set()
    for _ in range(12):
        d.switch_to.active_element.send_keys(Keys.TAB)
        reached.add(d.switch_to.active_element.get_attribute("id") or d.switch_to.active_element.text)
    assert "bucket-name" in reached and "Create bucket" in reached, reached

    # A bucket, a namespace and a table, made in the console.
    bucket = unique("con")
    console.fill("#bucket-name", bucket)
    console.submit("form[action='/console/buckets'] button")
    assert console.path() == f"/console/buckets/{bucket}"
    assert bucket in d.title
    console.fill("#namespace-name", "sales")
    console.submit(f"form[action='/console/buckets/{bucket}/namespaces'] button")
    assert "sales" in console.one("#namespaces").text
    console.one("#tables summary").click()
    console.fill("#table-namespace", "sales")
    console.fill("#table-name", "orders")
    console.fill("#table-columns", f"id long required\nitem string\n{XSS} string")
    console.submit("#create-table button")
    table_path = f"/console/buckets/{bucket}/namespaces/sales/tables/orders"
    assert console.path() == table_path
    assert d.title.startswith("sales.orders")
    assert "No snapshots yet" in console.one("#snapshots").text
    console.every_control_labelled()

    # Rows appended by PyIceberg, in three commits (three small files), and the probe as a property.
    bucket_arn = console.one("dl.facts dd.mono").text.split("/table/")[0]
    assert bucket_arn.endswith(f":bucket/{bucket}")
    catalog = rest_catalog(server, bucket_arn)
    table = catalog.load_table("sales.orders")
    for batch in range(3):
        table.append(arrow_rows(batch * 4, 4))
    with table.transaction() as tx:
        tx.set_properties({XSS: XSS})

    console.go(table_path)
    console.no_alert()
    assert XSS not in d.page_source  # every occurrence is escaped text
    assert any(e.text == XSS for e in console.all("#schema td")), "the probe column shows as text"
    assert any(e.text == XSS for e in console.all("#properties dt")), "the probe property shows as text"
    timeline = console.one("svg#snapshot-timeline")
    assert timeline.get_attribute("data-snapshots") == "3"
    newest = console.one("#snapshot-table tbody tr")
    assert newest.get_attribute("data-operation") == "append"
    assert newest.get_attribute("data-files") == "3"
    assert newest.get_attribute("data-records") == "12"
    preview = console.all("#preview-table tbody tr")
    assert len(preview) == 12
    cells = {tuple(td.text for td in row.find_elements(By.TAG_NAME, "td")) for row in preview}
    assert ("5", "item-5", XSS) in cells
    assert console.one("svg#file-size-histogram").get_attribute("data-files") == "3"
    assert console.one("#version-token").text and console.one("#metadata-location").text.startswith("s3://")
    console.shot("04-table-before-compaction")
    console.shot("04-table-before-compaction", width=390)

    # Run compaction now from the maintenance page: its run is listed, and the chart's file count goes down.
    console.one(f"a[href='{table_path}/maintenance']").click()
    assert console.path() == f"{table_path}/maintenance"
    assert d.title.startswith("Maintenance of sales.orders")
    console.every_control_labelled()
    console.one("#run-job").send_keys("icebergCompaction")
    console.submit("#run-now button")
    assert console.path().startswith(f"{table_path}/maintenance")
    run = console.one("#run-table tbody tr")
    assert run.get_attribute("data-job") == "icebergCompaction"
    assert run.get_attribute("data-outcome") == "Successful", run.text
    assert run.get_attribute("data-files-in") == "3" and run.get_attribute("data-files-out") == "1"
    console.shot("05-maintenance")

    console.go(table_path)
    assert console.one("svg#snapshot-timeline").get_attribute("data-snapshots") == "4"
    newest = console.one("#snapshot-table tbody tr")
    assert newest.get_attribute("data-operation") == "replace"
    assert newest.get_attribute("data-files") == "1"
    points = console.all("svg#snapshot-timeline g[data-series='Data files'] circle")
    assert [p.get_attribute("data-value") for p in points] == ["1", "2", "3", "1"]
    assert len(console.all("#preview-table tbody tr")) == 12
    assert console.one("svg#file-size-histogram").get_attribute("data-files") == "1"
    console.shot("06-table-after-compaction")

    # The policy editor refuses a bad document, inline, with line and column, and stores nothing.
    console.go(f"/console/buckets/{bucket}")
    console.fill("#policy-document", BAD_POLICY)
    console.submit("#policy form button[type=submit]")
    error = console.one("#policy-error").text
    assert "Line 5, column" in error and "GetTabel" in error, error
    assert console.one("#policy-document").get_attribute("aria-invalid") == "true"
    console.shot("03-bucket-policy-error")
    s3tables = make_client(server.tables_url)
    with pytest.raises(s3tables.exceptions.NotFoundException):
        s3tables.get_table_bucket_policy(tableBucketARN=bucket_arn)
    console.go(f"/console/buckets/{bucket}")
    console.every_control_labelled()
    console.shot("02-bucket")
    console.shot("02-bucket", width=390)

    # Connect: the guide's configurations, filled with this server's endpoints and the bucket's ARN.
    console.go(f"/console/buckets/{bucket}/connect")
    assert d.title.startswith("Connect to")
    assert bucket_arn in console.one("#kafka-connect-text").text
    assert f"'uri'='{server.tables_url}/iceberg'" in console.one("#flink-text").text
    assert server.s3_url in console.one("#spark-text").text
    assert SECRET_ACCESS_KEY not in d.page_source
    console.shot("07-connect")

    # A read-only user, made on the Identity page: the new secret is shown once.
    console.go("/console/identity")
    console.fill("#user-name", "reader")
    console.submit("form[action='/console/identity/users'] button")
    console.submit("section[data-user=reader] form[action$='/access-keys'] button")
    reader_key = console.one("#new-access-key-id").text
    reader_secret = console.one("#new-secret-access-key").text
    assert reader_key and len(reader_secret) >= 20
    console.shot("08-identity-new-key")
    console.one("section[data-user=reader] details summary").click()
    console.fill("#users-reader-policy-name", "read-only")
    console.fill("#users-reader-policy-document", READ_ONLY_POLICY)
    console.submit("section[data-user=reader] form[action$='/policies'] button")
    console.go("/console/identity")
    assert reader_secret not in d.page_source, "a secret must not show again"
    assert "read-only" in console.one("section[data-user=reader]").text

    # A forged post with the root's own session but no csrf token: 403, and nothing changes.
    forged = requests.post(server.tables_url + "/console/buckets", data={"name": "forged-bucket"},
                           cookies={"tablebay_console": console.session_cookie()}, allow_redirects=False,
                           timeout=10)
    assert forged.status_code == 403

    console.sign_out()
    assert console.path() == "/console/login"

    # The read-only user sees everything and no mutating control.
    console.sign_in(reader_key, reader_secret)
    assert console.path() == "/console/buckets"
    assert console.post_forms() == []
    assert "Identity" not in console.one("header").text
    for path in (f"/console/buckets/{bucket}", table_path, f"{table_path}/maintenance"):
        console.go(path)
        assert console.post_forms() == [], (path, console.post_forms())
        assert console.all("button.danger") == []
    console.go(f"/console/buckets/{bucket}")
    console.shot("09-bucket-read-only")
    console.go(table_path)
    assert len(console.all("#preview-table tbody tr")) == 12  # s3tables:GetTableData is a Get*
    reader_cookie = console.session_cookie()
    csrf = console.one("form[action='/console/logout'] input[name=csrf]").get_attribute("value")
    # Without the token: refused as forged. With it: refused by the policy. Either way nothing changes.
    for data in ({"name": "reader-bucket"}, {"name": "reader-bucket", "csrf": csrf}):
        resp = requests.post(server.tables_url + "/console/buckets", data=data, allow_redirects=False,
                             cookies={"tablebay_console": reader_cookie}, timeout=10)
        assert resp.status_code == 403, (data.keys(), resp.status_code)
    resp = requests.post(server.tables_url + f"/console/buckets/{bucket}/delete", data={"csrf": csrf},
                         cookies={"tablebay_console": reader_cookie}, allow_redirects=False, timeout=10)
    assert resp.status_code == 403
    names = {b["name"] for b in s3tables.list_table_buckets()["tableBuckets"]}
    assert bucket in names and "reader-bucket" not in names and "forged-bucket" not in names

    # Sign out: the session is over, for the browser and for anyone holding its cookie.
    console.sign_out()
    assert console.path() == "/console/login"
    console.go("/console/buckets")
    assert console.path() == "/console/login"
    resp = requests.get(server.tables_url + "/console/buckets", cookies={"tablebay_console": reader_cookie},
                        allow_redirects=False, timeout=10)
    assert resp.status_code == 303 and resp.headers["location"] == "/console/login"


def test_pages_fit_a_phone(server, browser):
    """At 390 px nothing but tables and code blocks scrolls sideways, and those scroll inside themselves."""
    console = Console(browser, server)
    console.sign_in(ACCESS_KEY_ID, SECRET_ACCESS_KEY)
    try:
        for path, name in (("/console/buckets", "10-buckets"), ("/console/identity", "11-identity")):
            browser.set_window_size(390, 844)
            console.go(path)
            time.sleep(0.2)
            width = browser.execute_script("return document.documentElement.scrollWidth")
            assert width <= 392, f"{path} is {width} px wide at 390 px"
            console.shot(name, width=390)
    finally:
        browser.set_window_size(1280, 900)
        console.sign_out()
