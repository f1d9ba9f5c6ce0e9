//! Tablebay's object service: the files in a table's storage `s3://<table-id>--table-s3/`, whoever writes them
//! (a client through the S3 surface, the catalog its metadata files, compaction its data files).
//!
//! It owns object rows and their blobs: streaming writes verified before they become visible, reads of a range or
//! a part with preconditions, listings, multipart uploads, deletes and the drain of the blob-deletion queue, and
//! the checksums and encryption at rest of the bytes. It addresses storage by table id; resolving a bucket name or
//! a table to that id, deciding who may act, and the table's encryption setting are the caller's (the catalog and
//! the surfaces). Its errors ([`ObjectError`]) say what happened; each surface chooses the wire form.
#![warn(missing_docs)]

mod body;
mod checksum;
mod delete;
mod encryption;
mod error;
mod listing;
mod location;
mod multipart;
mod object;
mod read;
mod selection;
mod service;
mod write;

pub use body::{ByteStream, ChecksumClaim, ObjectBody, ObjectStream};
pub use checksum::{Checksum, ChecksumAlgorithm, ChecksumType};
pub use encryption::{ObjectEncryption, RequestedEncryption};
pub use error::{BodyError, ObjectError};
pub use listing::{ListRequest, Listing, MAX_LIST_KEYS};
pub use location::{
    MAX_KEY_BYTES, ObjectKey, TABLE_BUCKET_SUFFIX, TableLocation, warehouse_location,
};
pub use multipart::{
    CompleteRequest, CompletedPart, MAX_LIST_PARTS, MAX_OBJECT_BYTES, MAX_PART_BYTES,
    MAX_PART_NUMBER, MIN_PART_BYTES, Part, PartListing, Upload, UploadListRequest, UploadListing,
};
pub use object::{ObjectAttributes, ObjectInfo, ObjectView, PutCondition, PutOptions};
pub use read::StoredObject;
pub use selection::{ByteRange, EtagCondition, Preconditions, ReadRequest};
pub use service::{Objects, Storage};
pub use tablebay_store::meta::RowSync;
pub use write::MAX_PUT_BYTES;
