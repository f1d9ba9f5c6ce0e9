//! The S3 data plane for table files. Until it is filled in, every request gets S3's XML `NotImplemented`
//! error, so S3 clients fail clearly instead of hanging or misreading a JSON body.

mod placeholder;

pub(crate) use placeholder::router;
