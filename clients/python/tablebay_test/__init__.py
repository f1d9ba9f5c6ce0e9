"""Support code for the Tablebay real-client suite: starting the server, signing raw requests,
running the AWS CLI, and the expectations every test file shares.

The constants below are the identity every test server is started with (see conftest.py).
"""

REGION = "us-east-1"
ACCOUNT_ID = "111122223333"

# Root credentials handed to the server through TABLEBAY_ROOT_ACCESS_KEY_ID /
# TABLEBAY_ROOT_SECRET_ACCESS_KEY; they act as the account's own credentials.
ACCESS_KEY_ID = "TBTESTROOTACCESSKEY1"
SECRET_ACCESS_KEY = "tablebay-test-root-secret-0123456789abcdef"
