//! Regression tests of issue 14's IAM findings against the real binary, each asserting the refusal and that
//! nothing changed:
//! - 12: AssumeRole needs the role's trust policy AND the caller's own allow, within an account too (`roles.rs`);
//! - 9: vended credentials never do more than the caller's session, its session policy included (`roles.rs`);
//! - 6: `s3tables:namespace`, `s3tables:tableName`, `aws:ResourceTag/…` and `s3tables:TableBucketTag/…` apply on
//!   the control plane, the Iceberg catalog and the S3 data plane (`conditions.rs`), and a policy naming a key
//!   Tablebay does not fill is refused when put (`condition_keys.rs`);
//! - 10: the blobs an abort or an overwrite unlinked are deleted even when the server is killed right after
//!   (`deletions.rs`).

mod common;
mod condition_keys;
mod conditions;
mod deletions;
mod roles;
