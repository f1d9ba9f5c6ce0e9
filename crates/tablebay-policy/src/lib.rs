//! Tablebay's access-control policy language: the IAM JSON grammar that AWS S3 Tables and Alibaba Cloud OSS Tables
//! use, the catalog of `oss:*` / `s3tables:*` actions, and the evaluation rules of AWS IAM.
//!
//! The crate is pure: it parses and validates documents ([`Policy::parse`]) and decides one request
//! ([`evaluate`]). Where policies are stored, who the caller is and which action a route needs are the business of
//! the IAM service and the HTTP surfaces; the Iceberg REST operation → action map lives here
//! ([`iceberg_operation_actions`]) because it is part of the product's specification
//! (`product-guides/000_973c9f8a1fb7a415.txt`, last part).
//!
//! ```
//! use tablebay_policy::*;
//! let policy = Policy::parse(r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
//!     "Action":"oss:GetTable","Resource":"acs:osstables:*:123456789012:bucket/b/*"}]}"#,
//!     PolicyKind::Identity).unwrap();
//! let context = Context::new(chrono::Utc::now());
//! let request = Request {
//!     caller: Caller { account_id: "123456789012", arn: "acs:ram::123456789012:user/ana", is_account_root: false },
//!     action: Action::GetTable,
//!     resource_arn: "arn:aws:s3tables:us-east-1:123456789012:bucket/b/table/0190",
//!     resource_account: "123456789012",
//!     context: &context,
//! };
//! let policies = Policies { identity: std::slice::from_ref(&policy), resource: &[], sessions: &[] };
//! assert_eq!(evaluate(&request, &policies), Decision::Allow);
//! ```
#![warn(missing_docs)]

mod action;
mod arn;
mod condition;
mod document;
mod error;
mod eval;
mod iceberg;
mod ip;
mod keys;
mod pattern;

pub use action::{Action, Service};
pub use arn::ArnFlavor;
pub use document::{Policy, PolicyKind, ResourceFacts};
pub use error::PolicyError;
pub use eval::{Caller, Context, Decision, Policies, Request, evaluate, evaluate_assume_role};
pub use iceberg::{IcebergOperation, iceberg_operation_actions};

/// The largest policy document accepted, in bytes (S3 Tables' `ResourcePolicy` limit, `reference/s3tables-api.md`).
pub const MAX_POLICY_BYTES: usize = 20 * 1024;
