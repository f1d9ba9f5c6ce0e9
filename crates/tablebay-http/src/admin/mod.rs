//! The admin surface at `/admin/…` on the tables listener: SigV4 (signing name `s3tables` or `osstables`),
//! JSON bodies, errors in the control plane's restJson1 form. One file per operation family.

mod maintenance;

pub(crate) use maintenance::handle;
