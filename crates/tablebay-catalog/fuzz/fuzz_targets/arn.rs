//! Fuzzes the ARN parsers (`BucketArn::parse`, `TableArn::parse`, `ResourceArn::parse`) on arbitrary strings.
//!
//! Properties: nothing panics; the three parsers agree (a bucket ARN is a `ResourceArn::Bucket` and never a table
//! ARN, and the other way round); and whatever parses renders, in either flavor (`with_flavor`), to a string that
//! parses back to the same value and renders the same again. Authorization and the handlers both work on the
//! parsed value, so this is what makes the rendered ARN a policy is matched against name exactly the resource
//! acted on.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tablebay_catalog::{ArnFlavor, BucketArn, ResourceArn, TableArn};

fn in_flavor(arn: &ResourceArn, flavor: ArnFlavor) -> ResourceArn {
    match arn {
        ResourceArn::Bucket(bucket) => ResourceArn::Bucket(bucket.clone().with_flavor(flavor)),
        ResourceArn::Table(table) => ResourceArn::Table(TableArn {
            bucket: table.bucket.clone().with_flavor(flavor),
            table_id: table.table_id,
        }),
    }
}

fn round_trips(arn: &ResourceArn) {
    let rendered = arn.to_string();
    let reparsed = ResourceArn::parse(&rendered)
        .unwrap_or_else(|e| panic!("{rendered:?}, rendered from {arn:?}, does not parse: {e}"));
    assert_eq!(&reparsed, arn, "{rendered:?} parses to another ARN");
    assert_eq!(reparsed.to_string(), rendered);
    match arn {
        ResourceArn::Bucket(bucket) => {
            assert_eq!(BucketArn::parse(&rendered).ok().as_ref(), Some(bucket));
            assert_eq!(bucket.to_string(), rendered);
            assert!(TableArn::parse(&rendered).is_err());
        }
        ResourceArn::Table(table) => {
            assert_eq!(TableArn::parse(&rendered).ok().as_ref(), Some(table));
            assert_eq!(table.to_string(), rendered);
            assert!(BucketArn::parse(&rendered).is_err());
            // The bucket part of a table ARN is a bucket ARN of its own.
            assert_eq!(
                BucketArn::parse(&table.bucket.to_string()).ok().as_ref(),
                Some(&table.bucket)
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let bucket = BucketArn::parse(s);
    let table = TableArn::parse(s);
    let resource = ResourceArn::parse(s);
    match &resource {
        Ok(ResourceArn::Bucket(arn)) => {
            assert_eq!(bucket.as_ref().ok(), Some(arn));
            assert!(table.is_err());
        }
        Ok(ResourceArn::Table(arn)) => {
            assert_eq!(table.as_ref().ok(), Some(arn));
            assert!(bucket.is_err());
        }
        Err(_) => assert!(bucket.is_err() && table.is_err()),
    }
    let Ok(arn) = resource else {
        return;
    };
    round_trips(&arn);
    for flavor in [ArnFlavor::Oss, ArnFlavor::Aws] {
        round_trips(&in_flavor(&arn, flavor));
    }
});
